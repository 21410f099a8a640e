import { Project, VariableDeclarationKind, type SourceFile } from 'ts-morph';

/** One file under generated/, before its header is added and it is formatted. */
export interface GeneratedFile {
  /** Relative to generated/, with `/` separators: `graphql/Patient.graphql`. */
  readonly path: string;
  /** The spec/ files it was generated from, named in its header. */
  readonly sources: readonly string[];
  readonly content: string;
}

/** A data file: `{"//": header, "data": value}`, read at run time by runtime/model/generated-json.ts. */
export function jsonFile(path: string, sources: readonly string[], data: unknown): GeneratedFile {
  return { path, sources, content: JSON.stringify(data) };
}

/** Every emitter has this shape: IR in, files out. */
export type Emitter<IR> = (ir: IR) => GeneratedFile[];

export interface JsonIndexOptions {
  /** The TypeScript type of each data file. */
  readonly type: string;
  readonly typeModule: string;
  /** Name of the exported function that reads them all. */
  readonly loader: string;
  readonly docs: string;
}

/** `<folder>/index.ts`: the names of the folder's JSON data files and a function reading them all. */
export function jsonIndexFile(
  folder: string,
  names: readonly string[],
  sources: readonly string[],
  options: JsonIndexOptions,
): GeneratedFile {
  return typescriptFile(`${folder}/index.ts`, sources, (file) => {
    file.addImportDeclaration({
      moduleSpecifier: '../../runtime/model/generated-json.js',
      namedImports: ['readGeneratedJson'],
    });
    file.addImportDeclaration({
      moduleSpecifier: options.typeModule,
      namedImports: [options.type],
      isTypeOnly: true,
    });
    file.addVariableStatement({
      declarationKind: VariableDeclarationKind.Const,
      isExported: true,
      declarations: [
        {
          name: `${options.loader}Names`,
          type: 'readonly string[]',
          initializer: JSON.stringify(names),
        },
      ],
    });
    file.addFunction({
      name: options.loader,
      isExported: true,
      docs: [options.docs],
      returnType: `${options.type}[]`,
      statements: `return ${options.loader}Names.map((name) => readGeneratedJson<${options.type}>(\`${folder}/\${name}.json\`));`,
    });
  });
}

const project = new Project({ useInMemoryFileSystem: true });

/**
 * Builds a TypeScript file with ts-morph: `build` adds imports and statements to an empty
 * source file; the text it prints is formatted later by write.ts.
 */
export function typescriptFile(
  path: string,
  sources: readonly string[],
  build: (file: SourceFile) => void,
): GeneratedFile {
  const file = project.createSourceFile(`/${path}`, '', { overwrite: true });
  build(file);
  const content = file.getFullText();
  project.removeSourceFile(file);
  return { path, sources, content };
}

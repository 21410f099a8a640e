import { Project, type SourceFile } from 'ts-morph';

/** One file under generated/, before its header is added and it is formatted. */
export interface GeneratedFile {
  /** Relative to generated/, with `/` separators: `graphql/Patient.graphql`. */
  readonly path: string;
  /** The spec/ files it was generated from, named in its header. */
  readonly sources: readonly string[];
  readonly content: string;
}

/** Every emitter has this shape: IR in, files out. */
export type Emitter<IR> = (ir: IR) => GeneratedFile[];

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

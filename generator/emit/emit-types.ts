/**
 * TypeScript types for every resource and datatype (generated/types/), so that the runtime, bots
 * and the client share one definition of FHIR R4, taken from spec/.
 * @see http://hl7.org/fhir/R4/json.html
 */
import type { SourceFile } from 'ts-morph';
import type { ComplexTypeIR, ElementIR, PrimitiveIR, SpecIR } from '../ir/ir-types.js';
import { sortedBy } from '../ir/naming.js';
import { typescriptFile, type GeneratedFile } from './generated-file.js';

const PRIMITIVE_EXTENSION_TYPE = 'Element';
const ANY_RESOURCE = 'Resource';

export function emitTypes(ir: SpecIR): GeneratedFile[] {
  const tsTypes = new Map(ir.primitives.map((p) => [p.name, tsPrimitive(p)]));
  const owners = new Map<string, ComplexTypeIR[]>();
  for (const type of [...ir.datatypes, ...ir.resources.flatMap((r) => [r, ...r.backbones])]) {
    owners.set(type.owner, [...(owners.get(type.owner) ?? []), type]);
  }
  const files = sortedBy(owners, ([owner]) => owner).map(([owner, types]) =>
    typescriptFile(
      `types/${owner}.ts`,
      sortedBy(new Set(types.flatMap((t) => t.sources)), (s) => s),
      (file) => {
        addImports(file, owner, types, owners);
        for (const type of types) addInterface(file, type, tsTypes, type.kind === 'resource');
      },
    ),
  );
  return [...files, indexFile(ir, [...owners.keys()])];
}

function addInterface(
  file: SourceFile,
  type: ComplexTypeIR,
  tsTypes: ReadonlyMap<string, string>,
  isResource: boolean,
): void {
  const properties = type.elements.flatMap((element) => {
    const required = element.min > 0 && !element.choiceGroup;
    const own = {
      name: element.name,
      type: elementType(element, tsTypes),
      hasQuestionToken: !required,
      docs: element.description ? [element.description] : [],
    };
    if (element.kind !== 'primitive' || !element.extensible) return [own];
    const extension = element.array
      ? `(${PRIMITIVE_EXTENSION_TYPE} | null)[]`
      : PRIMITIVE_EXTENSION_TYPE;
    return [own, { name: `_${element.name}`, type: extension, hasQuestionToken: true, docs: [] }];
  });
  file.addInterface({
    name: type.name,
    isExported: true,
    docs: type.description ? [type.description] : [],
    properties: isResource
      ? [{ name: 'resourceType', type: `'${type.name}'`, isReadonly: true }, ...properties]
      : properties,
  });
}

function elementType(element: ElementIR, tsTypes: ReadonlyMap<string, string>): string {
  const single =
    element.kind === 'primitive'
      ? tsTypes.get(element.type)!
      : element.kind === 'resource'
        ? ANY_RESOURCE
        : element.type;
  return element.array ? `${single}[]` : single;
}

/** Imports every complex type the owner's interfaces use from other files. */
function addImports(
  file: SourceFile,
  owner: string,
  types: readonly ComplexTypeIR[],
  owners: ReadonlyMap<string, readonly ComplexTypeIR[]>,
): void {
  const ownerOf = new Map([...owners].flatMap(([o, ts]) => ts.map((t) => [t.name, o] as const)));
  const needed = new Map<string, Set<string>>();
  const use = (name: string, from: string) => {
    if (from !== owner) needed.set(from, (needed.get(from) ?? new Set()).add(name));
  };
  for (const element of types.flatMap((t) => t.elements)) {
    if (element.kind === 'complex') use(element.type, ownerOf.get(element.type)!);
    if (element.kind === 'resource') use(ANY_RESOURCE, 'index');
    if (element.kind === 'primitive' && element.extensible)
      use(PRIMITIVE_EXTENSION_TYPE, ownerOf.get(PRIMITIVE_EXTENSION_TYPE)!);
  }
  for (const [from, names] of sortedBy(needed, ([from]) => from)) {
    file.addImportDeclaration({
      moduleSpecifier: `./${from}.js`,
      namedImports: sortedBy(names, (n) => n),
      isTypeOnly: true,
    });
  }
}

function indexFile(ir: SpecIR, owners: readonly string[]): GeneratedFile {
  const sources = sortedBy(
    new Set([...ir.datatypes, ...ir.resources].flatMap((t) => t.sources)),
    (s) => s,
  );
  return typescriptFile('types/index.ts', sources, (file) => {
    for (const owner of sortedBy(owners, (o) => o))
      file.addExportDeclaration({ moduleSpecifier: `./${owner}.js` });
    for (const resource of ir.resources) {
      file.addImportDeclaration({
        moduleSpecifier: `./${resource.name}.js`,
        namedImports: [resource.name],
        isTypeOnly: true,
      });
    }
    file.addTypeAlias({
      name: ANY_RESOURCE,
      isExported: true,
      docs: ['Any FHIR resource.'],
      type: ir.resources.map((r) => r.name).join(' | '),
    });
    file.addTypeAlias({
      name: 'ResourceType',
      isExported: true,
      type: `${ANY_RESOURCE}['resourceType']`,
    });
  });
}

/** How FHIR JSON writes each primitive. @see http://hl7.org/fhir/R4/json.html#primitive */
function tsPrimitive(primitive: PrimitiveIR): string {
  return primitive.jsonType;
}

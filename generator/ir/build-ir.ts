/**
 * spec/ → IR. Reads the StructureDefinitions into primitives, datatypes (with their backbone types)
 * and resources, then attaches search parameters and reverse references to the resources.
 */
import type { Spec, StructureDefinition } from '../load/spec-types.js';
import type { ComplexTypeIR, PrimitiveIR, ResourceIR, SpecIR } from './ir-types.js';
import { buildComplexTypes, type TypeUniverse } from './build-elements.js';
import { buildPrimitive } from './build-primitive.js';
import { buildSearch } from './build-search.js';
import { sortedBy } from './naming.js';
import { snapshotOf } from './snapshot.js';

export function buildIR(spec: Spec): SpecIR {
  const definitions = spec.structureDefinitions.filter((sd) => sd.kind !== 'logical');
  const byUrl = new Map(definitions.map((sd) => [sd.url, sd]));
  const primitiveDefinitions = definitions.filter((sd) => sd.kind === 'primitive-type');
  const complexDefinitions = definitions.filter((sd) => sd.kind === 'complex-type');
  const resourceDefinitions = definitions.filter((sd) => sd.kind === 'resource' && !sd.abstract);
  assertUniqueIds(definitions);

  const primitiveNames = new Set(primitiveDefinitions.map((sd) => sd.id));
  const resourceNames = new Set(resourceDefinitions.map((sd) => sd.id));
  const universe: TypeUniverse = {
    isPrimitive: (name) => primitiveNames.has(name),
    isStringPrimitive: (name) => primitiveIndex.get(name)?.jsonType === 'string',
    isResource: (name) => resourceNames.has(name),
  };
  const filesOf = (sds: readonly StructureDefinition[]) =>
    sortedBy(new Set(sds.map((sd) => spec.files.get(sd)!)), (s) => s);
  const build = (sd: StructureDefinition, kind: 'datatype' | 'resource') => {
    const snapshot = snapshotOf(sd, byUrl);
    return buildComplexTypes(
      sd.id,
      kind,
      snapshot.elements,
      universe,
      filesOf(snapshot.definitions),
    );
  };

  const primitives = sortedBy(
    primitiveDefinitions.map((sd) => buildPrimitive(sd, byUrl, filesOf([sd]))),
    (p) => p.name,
  );
  const primitiveIndex = new Map(primitives.map((p) => [p.name, p]));
  const datatypes = complexDefinitions.flatMap((sd) => {
    const { root, backbones } = build(sd, 'datatype');
    return [root, ...backbones];
  });
  const resources = resourceDefinitions.map((sd) => build(sd, 'resource'));

  const allTypes = [...datatypes, ...resources.flatMap((r) => [r.root, ...r.backbones])];
  assertUniqueTypeNames(allTypes);
  const typeIndex = new Map(allTypes.map((t) => [t.name, t]));

  const search = buildSearch(
    spec.searchParameters,
    sortedBy(resourceDefinitions, (sd) => sd.id).map((sd) => ({
      name: sd.id,
      ancestors: ancestorsOf(sd, byUrl),
    })),
    spec.files,
  );
  const resourceIRs: ResourceIR[] = resources.map(({ root, backbones }) => {
    const { sources, ...searchIR } = search.forResource(root.name);
    return {
      ...root,
      kind: 'resource',
      sources: sortedBy(new Set([...root.sources, ...sources]), (s) => s),
      backbones,
      ...searchIR,
    };
  });
  assertKnownTypes(allTypes, typeIndex, primitiveIndex);

  return {
    primitives,
    datatypes: sortedBy(datatypes, (t) => t.name),
    resources: sortedBy(resourceIRs, (r) => r.name),
  };
}

/** The ids of the definitions `definition` derives from, nearest first, as far as spec/ has them. */
function ancestorsOf(
  definition: StructureDefinition,
  byUrl: ReadonlyMap<string, StructureDefinition>,
): string[] {
  const ancestors: string[] = [];
  let base = definition.baseDefinition ? byUrl.get(definition.baseDefinition) : undefined;
  while (base && base !== definition && !ancestors.includes(base.id)) {
    ancestors.push(base.id);
    base = base.baseDefinition ? byUrl.get(base.baseDefinition) : undefined;
  }
  return ancestors;
}

function assertUniqueIds(definitions: readonly StructureDefinition[]): void {
  const seen = new Set<string>();
  for (const sd of definitions) {
    if (seen.has(sd.id)) throw new Error(`Two StructureDefinitions in spec/ have the id ${sd.id}`);
    seen.add(sd.id);
  }
}

/**
 * A backbone type's name (`PatientContact`) may be taken by a datatype's or by another backbone's
 * (`Patient.contact` and a `PatientContact` datatype). Primitives need no check: their ids differ
 * from every other definition's (assertUniqueIds), and backbone names start with an upper-case
 * letter while FHIR's primitive names start with a lower-case one.
 */
function assertUniqueTypeNames(types: readonly ComplexTypeIR[]): void {
  const seen = new Map<string, string>();
  for (const type of types) {
    const other = seen.get(type.name);
    if (other) throw new Error(`Type name ${type.name} (${type.path}) clashes with ${other}`);
    seen.set(type.name, type.path);
  }
}

function assertKnownTypes(
  types: readonly ComplexTypeIR[],
  complex: ReadonlyMap<string, ComplexTypeIR>,
  primitives: ReadonlyMap<string, PrimitiveIR>,
): void {
  for (const type of types) {
    for (const element of type.elements) {
      const known =
        element.kind === 'resource' || complex.has(element.type) || primitives.has(element.type);
      if (!known) throw new Error(`${element.path} has the unknown type ${element.type}`);
    }
  }
}

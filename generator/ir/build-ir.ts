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
  const build = (sd: StructureDefinition, kind: 'datatype' | 'resource') =>
    buildComplexTypes(sd.id, kind, snapshotOf(sd, byUrl), universe, [spec.files.get(sd)!]);

  const primitives = sortedBy(
    primitiveDefinitions.map((sd) => buildPrimitive(sd, byUrl)),
    (p) => p.name,
  );
  const primitiveIndex = new Map(primitives.map((p) => [p.name, p]));
  const datatypes = complexDefinitions.flatMap((sd) => {
    const { root, backbones } = build(sd, 'datatype');
    return [root, ...backbones];
  });
  const resources = resourceDefinitions.map((sd) => {
    const { root, backbones } = build(sd, 'resource');
    return { root, backbones };
  });

  const allTypes = [...datatypes, ...resources.flatMap((r) => [r.root, ...r.backbones])];
  assertUniqueTypeNames(allTypes, primitiveNames);
  const typeIndex = new Map(allTypes.map((t) => [t.name, t]));

  const search = buildSearch(spec.searchParameters, sortedBy(resourceNames, (n) => n), spec.files);
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

function assertUniqueIds(definitions: readonly StructureDefinition[]): void {
  const seen = new Set<string>();
  for (const sd of definitions) {
    if (seen.has(sd.id)) throw new Error(`Two StructureDefinitions in spec/ have the id ${sd.id}`);
    seen.add(sd.id);
  }
}

function assertUniqueTypeNames(types: readonly ComplexTypeIR[], primitives: ReadonlySet<string>): void {
  const seen = new Map<string, string>();
  for (const type of types) {
    const other = seen.get(type.name) ?? (primitives.has(type.name) ? 'a primitive' : undefined);
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
      const known = element.kind === 'resource' || complex.has(element.type) || primitives.has(element.type);
      if (!known) throw new Error(`${element.path} has the unknown type ${element.type}`);
    }
  }
}

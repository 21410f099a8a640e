import type { SpecElement, StructureDefinition } from '../load/spec-types.js';

/**
 * The complete element list of a definition. HL7's definitions ship a snapshot; our own
 * (spec/graphir/) may give only a differential on top of DomainResource, so that a new resource
 * type is a short file. Then the base's elements are inherited under the new type's name and the
 * differential's elements follow, each overriding an inherited element with the same id.
 * @see http://hl7.org/fhir/R4/profiling.html#snapshot
 */
export function snapshotOf(
  definition: StructureDefinition,
  byUrl: ReadonlyMap<string, StructureDefinition>,
): readonly SpecElement[] {
  if (definition.snapshot) return definition.snapshot.element;
  const differential = definition.differential?.element ?? [];
  const base = definition.baseDefinition ? byUrl.get(definition.baseDefinition) : undefined;
  if (!base || differential.length === 0) {
    throw new Error(
      `StructureDefinition ${definition.id} has no snapshot; give a differential and a baseDefinition found in spec/`,
    );
  }
  if (differential[0].path !== definition.type) {
    throw new Error(`StructureDefinition ${definition.id}: the differential must start with the element ${definition.type}`);
  }
  const [baseRoot, ...baseElements] = snapshotOf(base, byUrl);
  const rename = (text: string) => definition.type + text.slice(baseRoot.path.length);
  const overrides = new Map(differential.map((e) => [e.id, e]));
  const inherited = baseElements.map((element) => {
    const id = rename(element.id);
    const renamed = { ...element, id, path: rename(element.path), base: element.base };
    return { ...renamed, ...overrides.get(id) };
  });
  const inheritedIds = new Set(inherited.map((e) => e.id));
  const own = differential.slice(1).filter((e) => !inheritedIds.has(e.id));
  return [{ ...baseRoot, ...differential[0] }, ...inherited, ...own.map(withOwnBase)];
}

function withOwnBase(element: SpecElement): SpecElement {
  return { ...element, base: { path: element.path, min: element.min ?? 0, max: element.max ?? '*' } };
}

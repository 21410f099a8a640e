import type { SpecElement, StructureDefinition } from '../load/spec-types.js';
import { parentPath } from './naming.js';

const BACKBONE_ELEMENT_URL = 'http://hl7.org/fhir/StructureDefinition/BackboneElement';

export interface Snapshot {
  readonly elements: readonly SpecElement[];
  /** The definitions these elements come from: the definition itself, then those it inherits from. */
  readonly definitions: readonly StructureDefinition[];
}

/**
 * The complete element list of a definition. HL7's definitions ship a snapshot; our own
 * (spec/graphir/) may give only a differential on top of DomainResource, so that a new resource
 * type is a short file. Then the base's elements are inherited under the new type's name and the
 * differential's elements follow, each overriding an inherited element with the same id. A
 * backbone element the differential declares (typed BackboneElement, with children) gets
 * BackboneElement's `id`, `extension` and `modifierExtension` before its own children, as HL7's
 * snapshots list them for `Patient.contact`.
 * @see http://hl7.org/fhir/R4/profiling.html#snapshot
 * @see http://hl7.org/fhir/R4/backboneelement.html
 */
export function snapshotOf(
  definition: StructureDefinition,
  byUrl: ReadonlyMap<string, StructureDefinition>,
): Snapshot {
  if (definition.snapshot) {
    return { elements: definition.snapshot.element, definitions: [definition] };
  }
  const differential = definition.differential?.element ?? [];
  const base = definition.baseDefinition ? byUrl.get(definition.baseDefinition) : undefined;
  if (!base || differential.length === 0) {
    throw new Error(
      `StructureDefinition ${definition.id} has no snapshot; give a differential and a baseDefinition found in spec/`,
    );
  }
  if (differential[0].path !== definition.type) {
    throw new Error(
      `StructureDefinition ${definition.id}: the differential must start with the element ${definition.type}`,
    );
  }
  const overrides = new Map(differential.map((e) => [e.id, e]));
  /** `elements` below `from`, moved below `to` and overridden by the differential. */
  const inherit = (elements: readonly SpecElement[], from: string, to: string) =>
    elements.map((element) => {
      const id = to + element.id.slice(from.length);
      return { ...element, id, path: to + element.path.slice(from.length), ...overrides.get(id) };
    });

  const baseSnapshot = snapshotOf(base, byUrl);
  const [baseRoot, ...baseElements] = baseSnapshot.elements;
  const definitions = [definition, ...baseSnapshot.definitions];
  const elements = [
    { ...baseRoot, ...differential[0] },
    ...inherit(baseElements, baseRoot.path, definition.type),
  ];
  const placed = new Set(elements.map((e) => e.id));
  for (const element of differential.slice(1)) {
    if (placed.has(element.id)) continue;
    elements.push(withOwnBase(element));
    if (!isBackbone(element, differential)) continue;
    const backbone = backboneElementSnapshot(definition, element, byUrl);
    const [backboneRoot, ...backboneChildren] = backbone.elements;
    const children = inherit(backboneChildren, backboneRoot.path, element.path);
    elements.push(...children);
    for (const child of children) placed.add(child.id);
    definitions.push(...backbone.definitions.filter((d) => !definitions.includes(d)));
  }
  return { elements, definitions };
}

function isBackbone(element: SpecElement, differential: readonly SpecElement[]): boolean {
  return (
    (element.type ?? []).some((t) => t.code === 'BackboneElement') &&
    differential.some((e) => parentPath(e.path) === element.path)
  );
}

function backboneElementSnapshot(
  definition: StructureDefinition,
  element: SpecElement,
  byUrl: ReadonlyMap<string, StructureDefinition>,
): Snapshot {
  const backbone = byUrl.get(BACKBONE_ELEMENT_URL);
  if (!backbone) {
    throw new Error(
      `StructureDefinition ${definition.id}: ${element.id} is a BackboneElement, but spec/ has no ${BACKBONE_ELEMENT_URL} to take its id and extensions from; add HL7's BackboneElement (profiles-types.json)`,
    );
  }
  return snapshotOf(backbone, byUrl);
}

function withOwnBase(element: SpecElement): SpecElement {
  return {
    ...element,
    base: { path: element.path, min: element.min ?? 0, max: element.max ?? '*' },
  };
}

/** Registry lookups, with per-type indexes built once and cached. */
import type {
  DefinitionRegistry,
  ElementDefinition,
  PrimitiveDefinition,
  TypeDefinition,
} from '../model/type-definition.js';

export interface TypeIndex {
  readonly byName: ReadonlyMap<string, ElementDefinition>;
  /** Expanded choice elements by group: `deceased` → [deceasedBoolean, deceasedDateTime]. */
  readonly choiceGroups: ReadonlyMap<string, readonly ElementDefinition[]>;
  /** Elements with min ≥ 1 that are not part of a choice group. */
  readonly required: readonly ElementDefinition[];
}

const typeIndexes = new WeakMap<TypeDefinition, TypeIndex>();
const resourceTypeSets = new WeakMap<readonly string[], ReadonlySet<string>>();

export function indexType(def: TypeDefinition): TypeIndex {
  let index = typeIndexes.get(def);
  if (index === undefined) {
    index = buildIndex(def);
    typeIndexes.set(def, index);
  }
  return index;
}

function buildIndex(def: TypeDefinition): TypeIndex {
  const byName = new Map<string, ElementDefinition>();
  const choiceGroups = new Map<string, ElementDefinition[]>();
  const required: ElementDefinition[] = [];
  for (const element of def.elements) {
    byName.set(element.name, element);
    if (element.choiceGroup !== undefined) {
      const members = choiceGroups.get(element.choiceGroup) ?? [];
      members.push(element);
      choiceGroups.set(element.choiceGroup, members);
    } else if (element.min >= 1) {
      required.push(element);
    }
  }
  return { byName, choiceGroups, required };
}

/**
 * What a `_x` property holds for a primitive element `x` (http://hl7.org/fhir/R4/json.html#primitive).
 * Built in rather than taken from the registry so it does not depend on how the generator
 * renders the abstract Element type.
 */
export const PRIMITIVE_ELEMENT_TYPE: TypeDefinition = {
  name: 'Element',
  kind: 'datatype',
  path: 'Element',
  elements: [
    { name: 'id', type: 'string', kind: 'primitive', min: 0, array: false },
    { name: 'extension', type: 'Extension', kind: 'complex', min: 0, array: true },
  ],
};

export function isResourceType(registry: DefinitionRegistry, name: string): boolean {
  let names = resourceTypeSets.get(registry.resourceTypes);
  if (names === undefined) {
    names = new Set(registry.resourceTypes);
    resourceTypeSets.set(registry.resourceTypes, names);
  }
  return names.has(name);
}

/** A type the registry must have; a missing one is a generator bug, not a client error. */
export function lookupType(registry: DefinitionRegistry, name: string, at: string): TypeDefinition {
  if (!Object.hasOwn(registry.types, name)) {
    throw new Error(`Definition registry has no type "${name}" (needed at ${at})`);
  }
  return registry.types[name];
}

export function lookupPrimitive(
  registry: DefinitionRegistry,
  name: string,
  at: string,
): PrimitiveDefinition {
  if (!Object.hasOwn(registry.primitives, name)) {
    throw new Error(`Definition registry has no primitive "${name}" (needed at ${at})`);
  }
  return registry.primitives[name];
}

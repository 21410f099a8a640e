import type { JsonType } from '../../runtime/model/type-definition.js';
import type { StructureDefinition } from '../load/spec-types.js';
import type { PrimitiveIR } from './ir-types.js';

const REGEX_EXTENSION = 'http://hl7.org/fhir/StructureDefinition/regex';
const SYSTEM_INTEGER = 'http://hl7.org/fhirpath/System.Integer';
/** How FHIR JSON writes each FHIRPath system type. @see http://hl7.org/fhir/R4/json.html#primitive */
const JSON_TYPES: Readonly<Record<string, JsonType>> = {
  'http://hl7.org/fhirpath/System.Boolean': 'boolean',
  [SYSTEM_INTEGER]: 'number',
  'http://hl7.org/fhirpath/System.Decimal': 'number',
};

/**
 * A primitive type's pattern comes from its `value` element, and so does its JSON representation,
 * except that a primitive derived from another is written as its base is: R4 types the value of
 * positiveInt and unsignedInt as System.String, yet FHIR JSON writes them as numbers.
 * @see http://hl7.org/fhir/R4/datatypes.html#positiveInt
 */
export function buildPrimitive(
  definition: StructureDefinition,
  byUrl: ReadonlyMap<string, StructureDefinition>,
  sources: readonly string[],
): PrimitiveIR {
  const elements = definition.snapshot?.element ?? [];
  const valueType = elements.find((e) => e.path === `${definition.type}.value`)?.type?.[0];
  if (!valueType) throw new Error(`Primitive type ${definition.id} has no value element`);
  const pattern = valueType.extension?.find((e) => e.url === REGEX_EXTENSION)?.valueString;
  const systemType = rootSystemType(definition, byUrl);
  return {
    name: definition.id,
    jsonType: JSON_TYPES[systemType] ?? 'string',
    integer: systemType === SYSTEM_INTEGER,
    ...(pattern ? { pattern } : {}),
    description: elements[0]?.short ?? definition.description ?? '',
    sources,
  };
}

/** The FHIRPath system type of the primitive at the root of the type's derivation chain. */
function rootSystemType(
  definition: StructureDefinition,
  byUrl: ReadonlyMap<string, StructureDefinition>,
): string {
  const base = definition.baseDefinition ? byUrl.get(definition.baseDefinition) : undefined;
  if (base?.kind === 'primitive-type') return rootSystemType(base, byUrl);
  const value = definition.snapshot?.element.find((e) => e.path === `${definition.type}.value`);
  return value?.type?.[0]?.code ?? '';
}

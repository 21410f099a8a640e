/**
 * Small in-memory specs for generator tests: the fixture spec (test/fixtures/spec) plus or minus a
 * few definitions, to show one rule or one loud failure at a time.
 */
import { loadSpec } from '../../generator/load/load-spec.js';
import type {
  SearchParameter,
  Spec,
  SpecElement,
  SpecElementType,
  StructureDefinition,
} from '../../generator/load/spec-types.js';

export const FIXTURE_SPEC = 'test/fixtures/spec';
const HL7 = 'http://hl7.org/fhir/StructureDefinition/';

/** The fixture spec with `add` appended and the definitions `remove` names (by id) left out. */
export function fixtureWith(
  add: { sds?: readonly StructureDefinition[]; sps?: readonly SearchParameter[] },
  remove: readonly string[] = [],
): Spec {
  const spec = loadSpec(FIXTURE_SPEC);
  const keep = <T extends { id: string }>(items: readonly T[]) =>
    items.filter((item) => !remove.includes(item.id));
  const structureDefinitions = [...keep(spec.structureDefinitions), ...(add.sds ?? [])];
  const searchParameters = [...keep(spec.searchParameters), ...(add.sps ?? [])];
  const files = new Map(spec.files);
  for (const added of [...(add.sds ?? []), ...(add.sps ?? [])])
    files.set(added, 'spec/in-memory.json');
  return { structureDefinitions, searchParameters, files };
}

/** An element row: path, then a type code, several codes, or `#path` for a contentReference. */
export type ElementRow = [path: string, type?: string | readonly string[], max?: string];

/** A StructureDefinition with a snapshot built from element rows (min 0, max 1 unless given). */
export function definition(
  id: string,
  kind: StructureDefinition['kind'],
  rows: readonly ElementRow[],
  base = `${HL7}${kind === 'resource' ? 'DomainResource' : 'Element'}`,
): StructureDefinition {
  return {
    resourceType: 'StructureDefinition',
    id,
    url: `${HL7}${id}`,
    name: id,
    type: id,
    kind,
    abstract: false,
    baseDefinition: base,
    derivation: 'specialization',
    snapshot: { element: [{ id, path: id, min: 0, max: '*' }, ...rows.map(toElement)] },
  };
}

function toElement([path, type, max = '1']: ElementRow): SpecElement {
  const element = { id: path, path, min: 0, max };
  if (typeof type === 'string' && type.startsWith('#'))
    return { ...element, contentReference: type };
  if (type === undefined) return element;
  const codes = typeof type === 'string' ? [type] : type;
  return { ...element, type: codes.map((code): SpecElementType => ({ code })) };
}

/** A SearchParameter with HL7's URL pattern; `id` defaults to `<base>-<code>`. */
export function searchParameter(
  fields: Pick<SearchParameter, 'code' | 'base' | 'type'> & Partial<SearchParameter>,
): SearchParameter {
  const id = fields.id ?? `${fields.base[0]}-${fields.code}`;
  return {
    resourceType: 'SearchParameter',
    id,
    url: `http://hl7.org/fhir/SearchParameter/${id}`,
    expression: `${fields.base[0]}.${fields.code}`,
    ...fields,
  };
}

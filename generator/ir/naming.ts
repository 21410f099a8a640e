/**
 * Naming rules, each in one place: FHIR names on one side, GraphQL and TypeScript names on the
 * other. Every function here has a table-driven test.
 */

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** `dateTime` → `DateTime`. */
export function capitalize(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/**
 * A search parameter code as a GraphQL argument: `address-city` → `address_city`.
 * GraphQL names cannot contain `-`, so FHIR's GraphQL page writes `_` instead.
 * @see http://hl7.org/fhir/R4/graphql.html#searching
 */
export function toArgumentName(code: string): string {
  const name = code.replaceAll('-', '_');
  if (!GRAPHQL_NAME.test(name)) {
    throw new Error(`Search parameter code "${code}" cannot be written as a GraphQL argument name`);
  }
  return name;
}

/**
 * A GraphQL argument back to its search parameter code, the inverse of toArgumentName:
 * `address_city` → `address-city`. A leading `_` is kept, as the codes of Resource's own
 * parameters start with one (`_id`, `_lastUpdated`); every other `_` becomes `-`. So a code with
 * `_` after its first character (none in R4) does not come back: `a_b` → `a-b`.
 */
export function toSearchCode(argument: string): string {
  const leading = argument.startsWith('_') ? '_' : '';
  return leading + argument.slice(leading.length).replaceAll('_', '-');
}

/** An expanded choice element: `value[x]` of type `dateTime` → `valueDateTime`. */
export function choiceElementName(path: string, typeCode: string): string {
  return lastSegment(path).replace(/\[x\]$/, '') + capitalize(typeCode);
}

export function isChoicePath(path: string): boolean {
  return path.endsWith('[x]');
}

/** The group name of a choice element: `Observation.value[x]` → `value`. */
export function choiceGroupName(path: string): string {
  return lastSegment(path).replace(/\[x\]$/, '');
}

/**
 * A backbone element's type name: its path in PascalCase, `Patient.contact` → `PatientContact`,
 * `Bundle.entry.request` → `BundleEntryRequest` (the convention HAPI and Medplum use too).
 */
export function backboneTypeName(path: string): string {
  return path.split('.').map(capitalize).join('');
}

export function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf('.') + 1);
}

export function parentPath(path: string): string {
  return path.slice(0, Math.max(0, path.lastIndexOf('.')));
}

/** `http://hl7.org/fhir/StructureDefinition/Patient` → `Patient`. */
export function typeNameFromUrl(url: string): string {
  return url.slice(url.lastIndexOf('/') + 1);
}

export function isGraphQLName(name: string): boolean {
  return GRAPHQL_NAME.test(name);
}

/** Locale-independent ordering by UTF-16 code units, for stable generated output. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function sortedBy<T>(items: Iterable<T>, key: (item: T) => string): T[] {
  return [...items].sort((a, b) => compareStrings(key(a), key(b)));
}

/** The two mutation input kinds, `PatientCreate` and `PatientUpdate`. */
export type InputKind = 'Create' | 'Update';

/**
 * Names of the GraphQL types Graphir adds around a FHIR type, as Medplum names them, so that
 * queries and typed clients written for Medplum validate here: mutation inputs `PatientCreate`,
 * `CommunicationPayloadCreate` (type name + kind), pages `PatientConnection` and their edges.
 * No FHIR type name ends in these suffixes, and buildSchemaFromPieces refuses a duplicate name.
 */
export const graphqlNames = {
  input: (type: string, kind: InputKind) => `${type}${kind}`,
  connection: (type: string) => `${type}Connection`,
  edge: (type: string) => `${type}ConnectionEdge`,
  referenceParameter: (type: string) => `${type}_ReferenceParameter`,
} as const;

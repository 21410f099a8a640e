/**
 * GraphQL queries Q1–Q8 over the synthetic data set, shared by the GraphQL bench and the mixed
 * load bench. Each takes the loaded ids and a request number and gives the query with its
 * variables: the text stays the same across requests, as in real clients.
 */
export interface Ids {
  readonly patients: string[];
  readonly reports: string[];
}

export type GraphqlQuery = (ids: Ids, i: number) => [string, Record<string, unknown>];

export const QUERIES: Record<string, GraphqlQuery> = {
  Q1: (ids, i) => [
    'query ($id: ID!) { Patient(id: $id) { id name { family given use } } }',
    { id: pick(ids.patients, i) },
  ],
  Q2: (_, i) => [
    'query ($name: String) { PatientList(name: $name) { id name { family given } } }',
    { name: ['smi', 'garc', 'chal', 'jones'][i % 4] },
  ],
  Q3: (_, i) => [
    'query ($city: String, $gender: String) { PatientList(address_city: $city, gender: $gender) { id birthDate } }',
    { city: ['Boston', 'Austin', 'Denver'][i % 3], gender: i % 2 ? 'male' : 'female' },
  ],
  Q4: (ids, i) => [
    'query ($id: ID!) { DiagnosticReport(id: $id) { id status result { resource { ... on Observation { id valueQuantity { value unit } } } } } }',
    { id: pick(ids.reports, i) },
  ],
  Q5: (ids, i) => [
    'query ($id: ID!) { Patient(id: $id) { id DiagnosticReportList(_reference: subject) { id result { resource { ... on Observation { valueQuantity { value unit } } } } } EncounterList(_reference: patient) { id status } } }',
    { id: pick(ids.patients, i) },
  ],
  Q6: (ids, i) => [
    'query ($id: ID!) { Patient(id: $id) { name(use: official) { family } extension(url: "http://example.org/fhir/StructureDefinition/preferred-pharmacy") { valueString } } }',
    { id: pick(ids.patients, i) },
  ],
  Q7: (ids, i) => [
    'query ($id: ID!) { Patient(id: $id) { name(fhirpath: "use = \'nickname\'") { given } } }',
    { id: pick(ids.patients, i) },
  ],
  Q8: () => [
    '{ PatientList(_count: 100) { id name { family given } address { city state postalCode } } }',
    {},
  ],
};

/**
 * Q1 and Q5 with the id written into the text, as the FHIR spec's examples and many clients
 * write it: every patient makes another text.
 */
export const LITERAL_QUERIES: Record<string, GraphqlQuery> = {
  Q1: (ids, i) => [
    `{ Patient(id: "${pick(ids.patients, i)}") { id name { family given use } } }`,
    {},
  ],
  Q5: (ids, i) => [
    `{ Patient(id: "${pick(ids.patients, i)}") { id DiagnosticReportList(_reference: subject) { id result { resource { ... on Observation { valueQuantity { value unit } } } } } EncounterList(_reference: patient) { id status } } }`,
    {},
  ],
};

export function pick(list: readonly string[], i: number): string {
  return list[(i * 7919) % list.length];
}

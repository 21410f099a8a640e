/**
 * The Q-suite of `npm run bench:scale`, over the big project of scale-dataset.ts: reads by id,
 * name and token searches, references followed forward (chained) and reverse, pages of 100, `_sort` and
 * `_total=accurate`, in GraphQL and in REST, as issue 31's table lists them. Each query takes the
 * request number and gives the request, so that successive requests vary their values.
 */
import { pick } from './graphql-query-set.js';

export interface ScaleIds {
  /** Ids of the big project's Patients. */
  readonly patients: string[];
}

export type ScaleRequest =
  | { readonly graphql: string; readonly variables: Record<string, unknown> }
  | { readonly rest: string };

export type ScaleQuery = (ids: ScaleIds, i: number) => ScaleRequest;

const FAMILIES = ['Smith', 'García', 'Chalmers', 'Jones'];
const CITIES = ['Boston', 'Austin', 'Denver'];
/** Each of the six codes is one Observation of the six every patient has: 1/6 of them match. */
const OBSERVATION_CODES = ['29463-7', '8867-4', '8480-6'];
const CONDITION_CODES = ['44054006', '38341003', '55822004'];

export const SCALE_QUERIES: Record<string, ScaleQuery> = {
  'GraphQL Patient(id:)': (ids, i) => ({
    graphql: 'query ($id: ID!) { Patient(id: $id) { id name { family given use } } }',
    variables: { id: pick(ids.patients, i) },
  }),
  'GraphQL PatientList(family:)': (_, i) => ({
    graphql:
      'query ($family: String) { PatientList(family: $family) { id name { family given } } }',
    variables: { family: FAMILIES[i % FAMILIES.length] },
  }),
  'GraphQL PatientList(address_city:, gender:)': (_, i) => ({
    graphql:
      'query ($city: String, $gender: String) { PatientList(address_city: $city, gender: $gender) { id birthDate } }',
    variables: { city: CITIES[i % CITIES.length], gender: i % 2 ? 'male' : 'female' },
  }),
  'GraphQL Patient → DiagnosticReports → Observations, Encounters': (ids, i) => ({
    graphql:
      'query ($id: ID!) { Patient(id: $id) { id DiagnosticReportList(_reference: subject) { id result { resource { ... on Observation { valueQuantity { value unit } } } } } EncounterList(_reference: patient) { id status } } }',
    variables: { id: pick(ids.patients, i) },
  }),
  'GraphQL PatientList(_count: 100)': () => ({
    graphql: '{ PatientList(_count: 100) { id name { family given } address { city } } }',
    variables: {},
  }),
  'REST Patient/{id}': (ids, i) => ({ rest: `/Patient/${pick(ids.patients, i)}` }),
  'REST Observation?code=…&_total=accurate': (_, i) => ({
    rest: `/Observation?code=http://loinc.org|${OBSERVATION_CODES[i % OBSERVATION_CODES.length]}&_total=accurate`,
  }),
  'REST Patient?name=smi&_sort=-_lastUpdated': () => ({
    rest: '/Patient?name=smi&_sort=-_lastUpdated',
  }),
  'REST DiagnosticReport?subject=…&_include=…:result (forward)': (ids, i) => ({
    rest: `/DiagnosticReport?subject=Patient/${pick(ids.patients, i)}&_include=DiagnosticReport:result`,
  }),
  'REST Patient?_id=&_revinclude=Condition:subject (reverse)': (ids, i) => ({
    rest: `/Patient?_id=${pick(ids.patients, i)}&_revinclude=Condition:subject`,
  }),
  'REST Condition?code=…&_count=100': (_, i) => ({
    rest: `/Condition?code=http://snomed.info/sct|${CONDITION_CODES[i % CONDITION_CODES.length]}&_count=100`,
  }),
};

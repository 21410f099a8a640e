/**
 * The data set of `npm run bench:scale`: the synthetic patients of synthetic-dataset.ts (a
 * Patient, 3 Encounters, 2 DiagnosticReports with 3 Observations each) with, as Synthea's records
 * have, 1–3 Conditions and 0–3 MedicationRequests each: 15.5 resources per patient on average.
 * Patients are spread over projects of varied size: half of them in one big project, the rest
 * over the small ones with weights 1, 1/2, 1/3… (the first small project is about five times the
 * size of the last of 24). The same patient index always makes the same resources in the same
 * project, so every run loads the same data.
 */
import { patientEntries, random, type BundleEntry } from './synthetic-dataset.js';

/** Projects besides the big one. */
export const SMALL_PROJECTS = 24;
/** Entries per transaction Bundle, whole patients per Bundle. */
export const BUNDLE_ENTRIES = 480;
/** The project the Q-suite queries: index 0. */
export const BIG_PROJECT = 0;

const SNOMED_CONDITIONS = [
  ['44054006', 'Diabetes mellitus type 2'],
  ['38341003', 'Hypertensive disorder'],
  ['195662009', 'Acute viral pharyngitis'],
  ['10509002', 'Acute bronchitis'],
  ['40055000', 'Chronic sinusitis'],
  ['55822004', 'Hyperlipidemia'],
  ['233604007', 'Pneumonia'],
  ['68496003', 'Polyp of colon'],
];
const RXNORM_MEDICATIONS = [
  ['860975', 'Metformin hydrochloride 500 MG Oral Tablet'],
  ['314076', 'Lisinopril 10 MG Oral Tablet'],
  ['308136', 'Amlodipine 2.5 MG Oral Tablet'],
  ['312961', 'Simvastatin 20 MG Oral Tablet'],
  ['834061', 'Penicillin V Potassium 250 MG Oral Tablet'],
  ['313782', 'Acetaminophen 325 MG Oral Tablet'],
];

const smallWeights = Array.from({ length: SMALL_PROJECTS }, (_, k) => 1 / (k + 1));
const smallWeightTotal = smallWeights.reduce((sum, weight) => sum + weight, 0);

/** The project (0 the big one, 1… the small ones) that patient `index` belongs to. */
export function projectOf(index: number): number {
  const next = random(index * 7 + 3);
  if (next() < 0.5) return BIG_PROJECT;
  let point = next() * smallWeightTotal;
  for (let k = 0; k < SMALL_PROJECTS; k++) {
    point -= smallWeights[k];
    if (point < 0) return k + 1;
  }
  return SMALL_PROJECTS;
}

/** Patient `index`'s resources, linked by urn:uuid within its Bundle. */
export function recordEntries(index: number): BundleEntry[] {
  const entries = patientEntries(index);
  const patientUrl = entries[0].fullUrl;
  const encounterUrl = entries[1].fullUrl;
  const next = random(index * 13 + 5);
  const uuid = (n: number) =>
    `urn:uuid:00000000-0000-4000-8000-${String(index * 100 + n).padStart(12, '0')}`;
  const conditions = 1 + Math.floor(next() * 3);
  for (let c = 0; c < conditions; c++) {
    const [code, display] = SNOMED_CONDITIONS[Math.floor(next() * SNOMED_CONDITIONS.length)];
    entries.push(
      entry(uuid(30 + c), {
        resourceType: 'Condition',
        clinicalStatus: {
          coding: [
            {
              system: 'http://terminology.hl7.org/CodeSystem/condition-clinical',
              code: next() < 0.7 ? 'active' : 'resolved',
            },
          ],
        },
        code: { coding: [{ system: 'http://snomed.info/sct', code, display }], text: display },
        subject: { reference: patientUrl },
        encounter: { reference: encounterUrl },
        onsetDateTime: `20${10 + Math.floor(next() * 14)}-0${1 + Math.floor(next() * 9)}-15T09:00:00Z`,
      }),
    );
  }
  const medications = Math.floor(next() * 4);
  for (let m = 0; m < medications; m++) {
    const [code, display] = RXNORM_MEDICATIONS[Math.floor(next() * RXNORM_MEDICATIONS.length)];
    entries.push(
      entry(uuid(40 + m), {
        resourceType: 'MedicationRequest',
        status: next() < 0.6 ? 'active' : 'stopped',
        intent: 'order',
        medicationCodeableConcept: {
          coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code, display }],
        },
        subject: { reference: patientUrl },
        encounter: { reference: encounterUrl },
        authoredOn: `20${10 + Math.floor(next() * 14)}-0${1 + Math.floor(next() * 9)}-20`,
      }),
    );
  }
  return entries;
}

export interface ProjectBundle {
  readonly project: number;
  readonly bundle: { resourceType: 'Bundle'; type: 'transaction'; entry: BundleEntry[] };
}

/**
 * Transaction Bundles of patients `from` onwards, each of one project's patients, until the
 * Bundles made hold at least `resources` entries; then every project's part-filled Bundle.
 * `next` tells the caller where the following call should start.
 */
export function* projectBundles(
  from: number,
  resources: number,
  next: { patient: number },
): Generator<ProjectBundle> {
  const pending = new Map<number, BundleEntry[]>();
  let made = 0;
  let index = from;
  while (made < resources) {
    const project = projectOf(index);
    const entries = pending.get(project) ?? [];
    const record = recordEntries(index++);
    entries.push(...record);
    made += record.length;
    pending.set(project, entries);
    if (entries.length >= BUNDLE_ENTRIES) {
      pending.delete(project);
      yield transaction(project, entries);
    }
  }
  next.patient = index;
  for (const [project, entries] of pending) yield transaction(project, entries);
}

function transaction(project: number, entry: BundleEntry[]): ProjectBundle {
  return { project, bundle: { resourceType: 'Bundle', type: 'transaction', entry } };
}

function entry(fullUrl: string, resource: BundleEntry['resource']): BundleEntry {
  return { fullUrl, resource, request: { method: 'POST', url: resource.resourceType } };
}

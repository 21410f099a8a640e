/**
 * The deterministic synthetic data set the benchmarks load: per patient (official and nickname
 * names, an address with city, state and postal code, two extensions), 3 Encounters, and 2
 * DiagnosticReports with 3 Observations (valueQuantity) each — 12 resources per patient.
 * Each patient's resources travel in one transaction Bundle chunk, linked by urn:uuid.
 */
const FAMILIES = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'García',
  'Miller',
  'Davis',
  'Rodríguez',
  'Martínez',
  'Hernández',
  'López',
  'Müller',
  'Nguyen',
  'Chalmers',
  'Okafor',
];
const GIVEN = [
  'James',
  'Mary',
  'Robert',
  'Patricia',
  'John',
  'Jennifer',
  'Michael',
  'Linda',
  'Zoë',
  'José',
  'Anaïs',
  'Wei',
  'Fatima',
  'Olu',
  'Peter',
  'Ana',
];
const CITIES = [
  ['Boston', 'MA', '02108'],
  ['Springfield', 'IL', '62701'],
  ['Austin', 'TX', '73301'],
  ['Portland', 'OR', '97201'],
  ['Denver', 'CO', '80201'],
  ['Madison', 'WI', '53701'],
];
const LOINC = [
  ['29463-7', 'Body weight', 'kg'],
  ['8302-2', 'Body height', 'cm'],
  ['8867-4', 'Heart rate', '/min'],
  ['2339-0', 'Glucose', 'mg/dL'],
  ['8480-6', 'Systolic blood pressure', 'mm[Hg]'],
  ['8310-5', 'Body temperature', 'Cel'],
];

export interface BundleEntry {
  readonly fullUrl: string;
  readonly resource: Record<string, unknown> & { resourceType: string };
  readonly request: { readonly method: 'POST'; readonly url: string };
}

/** Seeded PRNG (mulberry32), so every run loads the same data. */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function patientEntries(index: number): BundleEntry[] {
  const next = random(index + 1);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
  const uuid = (n: number) =>
    `urn:uuid:00000000-0000-4000-8000-${String(index * 100 + n).padStart(12, '0')}`;
  const patientUrl = uuid(0);
  const family = pick(FAMILIES);
  const given = pick(GIVEN);
  const [city, state, postalCode] = pick(CITIES);
  const birthDate = `${1940 + Math.floor(next() * 60)}-${String(1 + Math.floor(next() * 12)).padStart(2, '0')}-${String(1 + Math.floor(next() * 28)).padStart(2, '0')}`;
  const entries: BundleEntry[] = [
    entry(patientUrl, {
      resourceType: 'Patient',
      identifier: [
        { system: 'urn:graphir:bench:mrn', value: `MRN${String(index).padStart(6, '0')}` },
      ],
      name: [
        { use: 'official', family, given: [given, pick(GIVEN)] },
        { use: 'nickname', given: [`${given.slice(0, 3)}y`] },
      ],
      gender: next() < 0.5 ? 'female' : 'male',
      birthDate,
      address: [
        { use: 'home', line: [`${1 + Math.floor(next() * 999)} Main St`], city, state, postalCode },
      ],
      extension: [
        {
          url: 'http://hl7.org/fhir/us/core/StructureDefinition/us-core-birthsex',
          valueCode: next() < 0.5 ? 'F' : 'M',
        },
        {
          url: 'http://example.org/fhir/StructureDefinition/preferred-pharmacy',
          valueString: `Pharmacy ${Math.floor(next() * 50)}`,
        },
      ],
    }),
  ];
  for (let e = 0; e < 3; e++) {
    entries.push(
      entry(uuid(1 + e), {
        resourceType: 'Encounter',
        status: 'finished',
        class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
        subject: { reference: patientUrl },
        period: {
          start: `20${10 + e * 4}-0${1 + e}-15T09:00:00Z`,
          end: `20${10 + e * 4}-0${1 + e}-15T09:30:00Z`,
        },
      }),
    );
  }
  for (let r = 0; r < 2; r++) {
    const observationUrls = [0, 1, 2].map((o) => uuid(10 + r * 3 + o));
    observationUrls.forEach((url, o) => {
      const [code, display, unit] = LOINC[(r * 3 + o) % LOINC.length];
      entries.push(
        entry(url, {
          resourceType: 'Observation',
          status: 'final',
          code: { coding: [{ system: 'http://loinc.org', code, display }] },
          subject: { reference: patientUrl },
          effectiveDateTime: `2023-0${1 + r}-1${o}T08:00:00Z`,
          valueQuantity: {
            value: Math.round(next() * 1000) / 10,
            unit,
            system: 'http://unitsofmeasure.org',
            code: unit,
          },
        }),
      );
    });
    entries.push(
      entry(uuid(20 + r), {
        resourceType: 'DiagnosticReport',
        status: 'final',
        code: {
          coding: [
            {
              system: 'http://loinc.org',
              code: r === 0 ? '85354-9' : '24323-8',
              display: r === 0 ? 'Vitals panel' : 'Metabolic panel',
            },
          ],
        },
        subject: { reference: patientUrl },
        effectiveDateTime: `2023-0${1 + r}-10T08:00:00Z`,
        result: observationUrls.map((reference) => ({ reference })),
      }),
    );
  }
  return entries;
}

/** Transaction Bundles of about `size` entries each, whole patients per Bundle. */
export function* transactionBundles(
  patients: number,
  size: number,
): Generator<{ resourceType: 'Bundle'; type: 'transaction'; entry: BundleEntry[] }> {
  let entry: BundleEntry[] = [];
  for (let i = 0; i < patients; i++) {
    entry.push(...patientEntries(i));
    if (entry.length >= size) {
      yield { resourceType: 'Bundle', type: 'transaction', entry };
      entry = [];
    }
  }
  if (entry.length > 0) yield { resourceType: 'Bundle', type: 'transaction', entry };
}

function entry(fullUrl: string, resource: BundleEntry['resource']): BundleEntry {
  return { fullUrl, resource, request: { method: 'POST', url: resource.resourceType } };
}

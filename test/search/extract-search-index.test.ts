import { describe, expect, it } from 'vitest';
import { loadSearchDefinition } from '../../generated/search/index.js';
import { compileFhirPath } from '../../runtime/search/extract-fhirpath.js';
import { compilePathPlan } from '../../runtime/search/extract-path-plan.js';
import { extractSearchIndex } from '../../runtime/search/extract-search-index.js';
import type { ResourceSearchDefinition } from '../../runtime/model/search-definition.js';
import type { SearchIndexRows } from '../../runtime/search/search-index.js';

type Resource = Record<string, unknown> & { resourceType: string };
type Kind = keyof SearchIndexRows;
/** Per index kind, per parameter code: the rows wanted for that code, without `code`. */
type Want = Partial<Record<Kind, Record<string, Record<string, unknown>[]>>>;

const patient: Resource = {
  resourceType: 'Patient',
  id: 'p1',
  meta: {
    lastUpdated: '2024-03-01T10:15:30.123+02:00',
    profile: ['http://hl7.org/fhir/us/core/StructureDefinition/us-core-patient'],
    tag: [{ system: 'http://example.org/tags', code: 'vip', display: 'Very Important' }],
  },
  extension: [
    { url: 'http://example.org/fhir/StructureDefinition/birth-sex', valueCode: 'F' },
    { url: 'http://example.org/fhir/StructureDefinition/pet', valueString: 'Rex' },
  ],
  identifier: [
    {
      system: 'http://hospital.example.org/mrn',
      value: 'MRN-001',
      type: { text: 'Medical Record Number' },
    },
    { system: 'urn:oid:2.16.840.1.113883.4.1', value: '123-45-6789' },
  ],
  active: true,
  name: [
    { use: 'official', family: 'Müller', given: ['Anna', 'Maria'], prefix: ['Dr.'] },
    { use: 'maiden', family: 'Schmidt', given: ['Anna'], text: 'Anna Schmidt' },
  ],
  telecom: [
    { system: 'phone', value: '+49 30 1234567', use: 'home' },
    { system: 'email', value: 'anna@example.org' },
  ],
  gender: 'female',
  birthDate: '1985-07',
  address: [
    {
      line: ['Hauptstraße 5', 'Hinterhaus'],
      city: 'Berlin',
      postalCode: '10115',
      country: 'DE',
    },
    { city: 'Zürich', state: 'ZH', country: 'CH' },
  ],
  generalPractitioner: [{ reference: 'Practitioner/pr1/_history/3' }],
  managingOrganization: { reference: 'https://fhir.example.org/r4/Organization/org-1' },
};

const observation: Resource = {
  resourceType: 'Observation',
  id: 'o1',
  status: 'final',
  code: {
    coding: [
      { system: 'http://loinc.org', code: '29463-7', display: 'Body Weight' },
      { system: 'http://snomed.info/sct', code: '27113001' },
    ],
    text: 'Weight',
  },
  subject: { reference: 'Patient/p1' },
  effectiveDateTime: '2024-03-01T08:30',
  valueQuantity: { value: 72.5, unit: 'kg', system: 'http://unitsofmeasure.org', code: 'kg' },
  component: [
    {
      code: { coding: [{ system: 'http://loinc.org', code: '8480-6' }] },
      valueQuantity: { value: 120, unit: 'mmHg' },
    },
  ],
};

const encounter: Resource = {
  resourceType: 'Encounter',
  status: 'finished',
  class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
  type: [{ text: 'Check-up' }],
  subject: { reference: '#pat' },
  contained: [{ resourceType: 'Patient', id: 'pat', name: [{ family: 'Doe' }] }],
  participant: [
    { individual: { reference: 'Practitioner/pr1' } },
    { individual: { reference: 'PractitionerRole/role-1' } },
  ],
  period: { start: '2024-03-01T09:00:00Z' },
  length: { value: 30, unit: 'minutes', system: 'http://unitsofmeasure.org', code: 'min' },
};

const diagnosticReport: Resource = {
  resourceType: 'DiagnosticReport',
  status: 'final',
  code: { coding: [{ system: 'http://loinc.org', code: '58410-2' }] },
  subject: { identifier: { system: 'http://hospital.example.org/mrn', value: 'MRN-001' } },
  issued: '2024-03-02T12:00:00.000Z',
  effectivePeriod: { start: '2024-03-01', end: '2024-03-01T10:00:00+01:00' },
  result: [{ reference: 'urn:uuid:6d5ab3b6-3f5e-4f8e-9f1a-2c0b8e7d7c10' }, { display: 'pending' }],
};

const condition: Resource = {
  resourceType: 'Condition',
  code: { coding: [{ system: 'http://snomed.info/sct', code: '44054006', display: 'Diabetes' }] },
  subject: { reference: 'http://other.example.org/fhir/Patient/p9' },
  onsetAge: { value: 52, unit: 'years', system: 'http://unitsofmeasure.org', code: 'a' },
  abatementString: 'In Remission',
  recordedDate: '2024-03-01',
};

const medicationRequest: Resource = {
  resourceType: 'MedicationRequest',
  status: 'active',
  intent: 'order',
  medicationReference: { reference: 'Medication/med-1' },
  subject: { reference: 'Patient/p1' },
  authoredOn: '2024-03-01T10:00:00-05:00',
  dosageInstruction: [{ timing: { event: ['2024-03-02', '2024-03-03T08:00:00Z'] } }],
};

const bot: Resource = {
  resourceType: 'Bot',
  identifier: [{ system: 'https://graphir.example/bots', value: 'triage' }],
  name: 'Triage Bot',
};

/** A definition of our own, for expressions that fail. */
function customDefinition(
  resourceType: string,
  parameters: Record<string, [ResourceSearchDefinition['parameters'][string]['type'], string]>,
): ResourceSearchDefinition {
  return {
    resourceType,
    arguments: {},
    parameters: Object.fromEntries(
      Object.entries(parameters).map(([code, [type, expression]]) => [
        code,
        { code, type, expression, modifiers: [] },
      ]),
    ),
  };
}

const cases: [string, { given: Resource | [Resource, ResourceSearchDefinition]; want: Want }][] = [
  [
    'Patient names: every part, normalized and as written, deduplicated across names',
    {
      given: patient,
      want: {
        string: {
          name: [
            { value: 'muller', exact: 'Müller' },
            { value: 'anna', exact: 'Anna' },
            { value: 'maria', exact: 'Maria' },
            { value: 'dr.', exact: 'Dr.' },
            { value: 'schmidt', exact: 'Schmidt' },
            { value: 'anna schmidt', exact: 'Anna Schmidt' },
          ],
          family: [
            { value: 'muller', exact: 'Müller' },
            { value: 'schmidt', exact: 'Schmidt' },
          ],
          given: [
            { value: 'anna', exact: 'Anna' },
            { value: 'maria', exact: 'Maria' },
          ],
        },
      },
    },
  ],
  [
    'Patient addresses: lines, city, state, postal code, country',
    {
      given: patient,
      want: {
        string: {
          address: [
            { value: 'hauptstraße 5', exact: 'Hauptstraße 5' },
            { value: 'hinterhaus', exact: 'Hinterhaus' },
            { value: 'berlin', exact: 'Berlin' },
            { value: '10115', exact: '10115' },
            { value: 'de', exact: 'DE' },
            { value: 'zurich', exact: 'Zürich' },
            { value: 'zh', exact: 'ZH' },
            { value: 'ch', exact: 'CH' },
          ],
          'address-city': [
            { value: 'berlin', exact: 'Berlin' },
            { value: 'zurich', exact: 'Zürich' },
          ],
          'address-state': [{ value: 'zh', exact: 'ZH' }],
        },
      },
    },
  ],
  [
    'Patient tokens: identifier, telecom, phone, email, gender, active, deceased, tag; none for the id, a column of its own',
    {
      given: patient,
      want: {
        token: {
          identifier: [
            {
              system: 'http://hospital.example.org/mrn',
              value: 'MRN-001',
              text: 'medical record number',
            },
            { system: 'urn:oid:2.16.840.1.113883.4.1', value: '123-45-6789', text: null },
          ],
          telecom: [
            { system: null, value: '+49 30 1234567', text: null },
            { system: null, value: 'anna@example.org', text: null },
          ],
          phone: [{ system: null, value: '+49 30 1234567', text: null }],
          email: [{ system: null, value: 'anna@example.org', text: null }],
          gender: [{ system: null, value: 'female', text: null }],
          active: [{ system: null, value: 'true', text: null }],
          deceased: [{ system: null, value: 'false', text: null }],
          _id: [],
          _tag: [{ system: 'http://example.org/tags', value: 'vip', text: 'very important' }],
        },
      },
    },
  ],
  [
    'Patient dates: a partial birth date; none for the last update, a column of its own',
    {
      given: patient,
      want: {
        date: {
          birthdate: [{ start: '1985-07-01T00:00:00.000Z', end: '1985-08-01T00:00:00.000Z' }],
          _lastUpdated: [],
          'death-date': [],
        },
      },
    },
  ],
  [
    'an instant with an offset',
    {
      given: {
        resourceType: 'AuditEvent',
        type: { code: 'rest' },
        recorded: '2024-03-01T10:15:30.123+02:00',
        agent: [{ requestor: true }],
        source: { observer: { display: 'x' } },
      },
      want: {
        date: { date: [{ start: '2024-03-01T08:15:30.123Z', end: '2024-03-01T08:15:30.124Z' }] },
      },
    },
  ],
  [
    'Patient references: a version is dropped, an absolute URL keeps its url',
    {
      given: patient,
      want: {
        reference: {
          'general-practitioner': [{ targetType: 'Practitioner', targetId: 'pr1', url: null }],
          organization: [
            {
              targetType: 'Organization',
              targetId: 'org-1',
              url: 'https://fhir.example.org/r4/Organization/org-1',
            },
          ],
          link: [],
        },
        uri: {
          _profile: [{ value: 'http://hl7.org/fhir/us/core/StructureDefinition/us-core-patient' }],
        },
      },
    },
  ],
  [
    'Observation: codings with display or concept text, plus the text itself',
    {
      given: observation,
      want: {
        token: {
          code: [
            { system: 'http://loinc.org', value: '29463-7', text: 'body weight' },
            { system: 'http://snomed.info/sct', value: '27113001', text: 'weight' },
            { system: null, value: null, text: 'weight' },
          ],
          'component-code': [{ system: 'http://loinc.org', value: '8480-6', text: null }],
          'combo-code': [
            { system: 'http://loinc.org', value: '29463-7', text: 'body weight' },
            { system: 'http://snomed.info/sct', value: '27113001', text: 'weight' },
            { system: null, value: null, text: 'weight' },
            { system: 'http://loinc.org', value: '8480-6', text: null },
          ],
          status: [{ system: null, value: 'final', text: null }],
          'value-concept': [],
        },
      },
    },
  ],
  [
    'Observation: quantities, a dateTime without zone, subject and patient',
    {
      given: observation,
      want: {
        quantity: {
          'value-quantity': [{ value: 72.5, system: 'http://unitsofmeasure.org', unit: 'kg' }],
          'component-value-quantity': [{ value: 120, system: null, unit: 'mmHg' }],
          'combo-value-quantity': [
            { value: 72.5, system: 'http://unitsofmeasure.org', unit: 'kg' },
            { value: 120, system: null, unit: 'mmHg' },
          ],
        },
        date: { date: [{ start: '2024-03-01T08:30:00.000Z', end: '2024-03-01T08:31:00.000Z' }] },
        reference: {
          subject: [{ targetType: 'Patient', targetId: 'p1', url: null }],
          patient: [{ targetType: 'Patient', targetId: 'p1', url: null }],
        },
      },
    },
  ],
  [
    'Observation: a group subject is no patient; valueString and effectiveTiming',
    {
      given: {
        resourceType: 'Observation',
        status: 'final',
        code: { text: 'Mood' },
        subject: { reference: 'Group/g1' },
        valueString: 'Cheerful',
        effectiveTiming: {
          event: ['2024-01-05'],
          repeat: { boundsPeriod: { start: '2024-01-01', end: '2024-01-31' } },
        },
      },
      want: {
        reference: {
          subject: [{ targetType: 'Group', targetId: 'g1', url: null }],
          patient: [],
        },
        string: { 'value-string': [{ value: 'cheerful', exact: 'Cheerful' }] },
        date: {
          date: [
            { start: '2024-01-05T00:00:00.000Z', end: '2024-01-06T00:00:00.000Z' },
            { start: '2024-01-01T00:00:00.000Z', end: '2024-02-01T00:00:00.000Z' },
          ],
        },
        token: { code: [{ system: null, value: null, text: 'mood' }] },
      },
    },
  ],
  [
    'Observation: valueCodeableConcept text is a value-string',
    {
      given: {
        resourceType: 'Observation',
        status: 'final',
        code: { text: 'Smoking' },
        valueCodeableConcept: {
          coding: [{ system: 'http://snomed.info/sct', code: '8517006' }],
          text: 'Ex-Smoker',
        },
      },
      want: {
        string: { 'value-string': [{ value: 'ex-smoker', exact: 'Ex-Smoker' }] },
        token: {
          'value-concept': [
            { system: 'http://snomed.info/sct', value: '8517006', text: 'ex-smoker' },
            { system: null, value: null, text: 'ex-smoker' },
          ],
        },
      },
    },
  ],
  [
    'Encounter: open period, duration, contained patient, practitioner only',
    {
      given: encounter,
      want: {
        date: { date: [{ start: '2024-03-01T09:00:00.000Z', end: null }] },
        quantity: { length: [{ value: 30, system: 'http://unitsofmeasure.org', unit: 'min' }] },
        reference: {
          subject: [{ targetType: null, targetId: null, url: '#pat' }],
          patient: [{ targetType: null, targetId: null, url: '#pat' }],
          participant: [
            { targetType: 'Practitioner', targetId: 'pr1', url: null },
            { targetType: 'PractitionerRole', targetId: 'role-1', url: null },
          ],
          practitioner: [{ targetType: 'Practitioner', targetId: 'pr1', url: null }],
        },
        token: {
          class: [
            {
              system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode',
              value: 'AMB',
              text: null,
            },
          ],
          type: [{ system: null, value: null, text: 'check-up' }],
        },
      },
    },
  ],
  [
    'DiagnosticReport: identifier-only subject, urn:uuid result, period with zone',
    {
      given: diagnosticReport,
      want: {
        reference: {
          subject: [],
          patient: [],
          result: [
            {
              targetType: null,
              targetId: null,
              url: 'urn:uuid:6d5ab3b6-3f5e-4f8e-9f1a-2c0b8e7d7c10',
            },
          ],
        },
        date: {
          issued: [{ start: '2024-03-02T12:00:00.000Z', end: '2024-03-02T12:00:00.001Z' }],
          date: [{ start: '2024-03-01T00:00:00.000Z', end: '2024-03-01T09:00:01.000Z' }],
        },
      },
    },
  ],
  [
    'Condition: onset age, abatement string, absolute patient reference',
    {
      given: condition,
      want: {
        quantity: {
          'onset-age': [{ value: 52, system: 'http://unitsofmeasure.org', unit: 'a' }],
          'abatement-age': [],
        },
        string: {
          'abatement-string': [{ value: 'in remission', exact: 'In Remission' }],
          'onset-info': [],
        },
        date: {
          'recorded-date': [{ start: '2024-03-01T00:00:00.000Z', end: '2024-03-02T00:00:00.000Z' }],
          'onset-date': [],
        },
        reference: {
          patient: [
            {
              targetType: 'Patient',
              targetId: 'p9',
              url: 'http://other.example.org/fhir/Patient/p9',
            },
          ],
        },
        token: {
          code: [{ system: 'http://snomed.info/sct', value: '44054006', text: 'diabetes' }],
        },
      },
    },
  ],
  [
    'Condition: onset as a Range gives its low and high, as a Period its bounds',
    {
      given: {
        resourceType: 'Condition',
        subject: { reference: 'Patient/p1' },
        onsetRange: { low: { value: 40, unit: 'a' }, high: { unit: 'a' } },
        abatementPeriod: { end: '2023' },
      },
      want: {
        quantity: { 'onset-age': [{ value: 40, system: null, unit: 'a' }] },
        date: { 'abatement-date': [{ start: null, end: '2024-01-01T00:00:00.000Z' }] },
      },
    },
  ],
  [
    'MedicationRequest: medication reference, timing events, authored with offset',
    {
      given: medicationRequest,
      want: {
        reference: {
          medication: [{ targetType: 'Medication', targetId: 'med-1', url: null }],
          patient: [{ targetType: 'Patient', targetId: 'p1', url: null }],
        },
        token: { code: [], intent: [{ system: null, value: 'order', text: null }] },
        date: {
          authoredon: [{ start: '2024-03-01T15:00:00.000Z', end: '2024-03-01T15:00:01.000Z' }],
          date: [
            { start: '2024-03-02T00:00:00.000Z', end: '2024-03-03T00:00:00.000Z' },
            { start: '2024-03-03T08:00:00.000Z', end: '2024-03-03T08:00:01.000Z' },
          ],
        },
      },
    },
  ],
  [
    'MedicationRequest: medication as a concept is the code',
    {
      given: {
        resourceType: 'MedicationRequest',
        status: 'active',
        intent: 'order',
        medicationCodeableConcept: {
          coding: [{ system: 'http://www.nlm.nih.gov/research/umls/rxnorm', code: '1049502' }],
        },
        subject: { reference: 'Patient/p1' },
      },
      want: {
        token: {
          code: [
            { system: 'http://www.nlm.nih.gov/research/umls/rxnorm', value: '1049502', text: null },
          ],
        },
        reference: { medication: [] },
      },
    },
  ],
  [
    "Bot: Graphir's own resource, typed from the element definitions",
    {
      given: bot,
      want: {
        token: {
          identifier: [{ system: 'https://graphir.example/bots', value: 'triage', text: null }],
        },
        string: { name: [{ value: 'triage bot', exact: 'Triage Bot' }] },
      },
    },
  ],
  [
    'InsurancePlan: a union of paths without the type in front; spellings of one value are kept apart',
    {
      given: { resourceType: 'InsurancePlan', name: 'Gold Plan', alias: ['Gold', 'GOLD plan'] },
      want: {
        string: {
          name: [
            { value: 'gold plan', exact: 'Gold Plan' },
            { value: 'gold', exact: 'Gold' },
            { value: 'gold plan', exact: 'GOLD plan' },
          ],
        },
      },
    },
  ],
  [
    'another type than the definition’s gives no rows',
    {
      given: [patient, loadSearchDefinition('Practitioner')],
      want: { string: { name: [], family: [] }, token: { gender: [] } },
    },
  ],
  [
    'numbers and money',
    {
      given: {
        resourceType: 'Invoice',
        status: 'issued',
        totalGross: { value: 119.5, currency: 'EUR' },
        totalNet: { currency: 'EUR' },
      },
      want: {
        quantity: {
          totalgross: [{ value: 119.5, system: 'urn:iso:std:iso:4217', unit: 'EUR' }],
          totalnet: [],
        },
      },
    },
  ],
  [
    'numbers: decimal and integer',
    {
      given: {
        resourceType: 'RiskAssessment',
        status: 'final',
        subject: { reference: 'Patient/p1' },
        prediction: [{ probabilityDecimal: 0.25 }, { probabilityDecimal: 0.25 }],
      },
      want: { number: { probability: [{ value: 0.25 }] } },
    },
  ],
  [
    'bad data is skipped, not thrown',
    {
      given: {
        resourceType: 'Patient',
        name: 'Doe',
        birthDate: 'yesterday',
        telecom: [{ value: 42 }, 'phone'],
        identifier: [{ type: { text: 'no value' } }, 7],
        address: [null, { city: 3 }],
        generalPractitioner: [{ reference: 7 }],
        active: 'yes',
        meta: { lastUpdated: '2024-02-30T00:00:00Z' },
      },
      want: {
        string: { name: [], address: [], 'address-city': [] },
        date: { birthdate: [], _lastUpdated: [] },
        token: { telecom: [], identifier: [], active: [] },
        reference: { 'general-practitioner': [] },
      },
    },
  ],
  [
    'fhirpath.js results: decimals are numbers, Bot values typed from the element definitions',
    {
      given: [
        {
          resourceType: 'RiskAssessment',
          status: 'final',
          subject: { reference: 'Patient/p1' },
          prediction: [{ probabilityDecimal: 0.25 }, { probabilityDecimal: 0.05 }],
        },
        customDefinition('RiskAssessment', {
          likely: ['number', 'RiskAssessment.prediction.probability.where($this > 0.1)'],
        }),
      ],
      want: { number: { likely: [{ value: 0.25 }] } },
    },
  ],
  [
    'fhirpath.js results for a resource its model does not know',
    {
      given: [
        bot,
        customDefinition('Bot', {
          named: ['token', "Bot.identifier.where(value.startsWith('tri'))"],
          upper: ['string', 'Bot.name.upper()'],
        }),
      ],
      want: {
        token: {
          named: [{ system: 'https://graphir.example/bots', value: 'triage', text: null }],
        },
        string: { upper: [{ value: 'triage bot', exact: 'TRIAGE BOT' }] },
      },
    },
  ],
  [
    'an expression that fails on this resource is skipped; resolve() fetches nothing',
    {
      given: [
        patient,
        customDefinition('Patient', {
          single: ['string', 'Patient.name.family.single()'],
          unparsable: ['string', 'Patient.name.('],
          resolved: ['reference', 'Patient.generalPractitioner.resolve()'],
          family: ['string', 'Patient.name.family'],
        }),
      ],
      want: {
        string: {
          single: [],
          unparsable: [],
          family: [
            { value: 'muller', exact: 'Müller' },
            { value: 'schmidt', exact: 'Schmidt' },
          ],
        },
        reference: { resolved: [] },
      },
    },
  ],
];

describe('extractSearchIndex', () => {
  it.each(cases)('%s', (_name, { given, want }) => {
    const [resource, definition] = Array.isArray(given)
      ? given
      : [given, loadSearchDefinition(given.resourceType)];
    const rows = extractSearchIndex(resource, definition);
    for (const [kind, byCode] of Object.entries(want) as [Kind, Record<string, unknown[]>][]) {
      for (const [code, wanted] of Object.entries(byCode)) {
        const found = (rows[kind] as { code: string }[]).filter((row) => row.code === code);
        expect({ kind, code, rows: found }).toEqual({
          kind,
          code,
          rows: wanted.map((row) => ({ code, ...(row as object) })),
        });
      }
    }
  });

  it('skips composite and special parameters', () => {
    const rows = extractSearchIndex(observation, loadSearchDefinition('Observation'));
    const all: { code: string }[] = Object.values(rows).flat();
    const codes = new Set(all.map((row) => row.code));
    expect(codes.has('code-value-quantity')).toBe(false);
    expect(codes.has('_text')).toBe(false);
  });

  const resources = cases
    .map(([, { given }]) => (Array.isArray(given) ? given[0] : given))
    .filter((resource, index, all) => all.indexOf(resource) === index);

  it.each(resources)('the fast path finds what fhirpath.js finds: $resourceType', (resource) => {
    const definition = loadSearchDefinition(resource.resourceType);
    for (const { expression, type } of Object.values(definition.parameters)) {
      if (type === 'composite' || type === 'special' || !expression) continue;
      const fast = compilePathPlan(expression, resource.resourceType);
      if (!fast) continue;
      const [byPlan, byFhirPath] = [fast, compileFhirPath(expression)].map((evaluate) => {
        const values: [unknown, string][] = [];
        // The element definitions type Resource.id as id, fhirpath.js as System.String.
        evaluate(resource, (value, type) => values.push([value, type === 'id' ? 'string' : type]));
        return values;
      });
      expect({ expression, values: byPlan }).toEqual({ expression, values: byFhirPath });
    }
  });
});

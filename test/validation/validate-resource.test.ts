import { describe, expect, it } from 'vitest';
import { definitionRegistry } from '../fixtures/definition-registry.js';
import { compilePattern, isBase64Binary } from '../../runtime/validation/primitive-value.js';
import { MAX_DEPTH, MAX_ISSUES } from '../../runtime/validation/validation-context.js';
import {
  ResourceValidationError,
  type ValidationIssue,
} from '../../runtime/validation/validation-issue.js';
import { parseResource, validateResource } from '../../runtime/validation/validate-resource.js';

/** An expected issue: only the fields worth pinning down; diagnostics exactly or by pattern. */
interface Want {
  readonly code?: ValidationIssue['code'];
  readonly expression?: string;
  readonly diagnostics?: string | RegExp;
}

interface Row {
  readonly given: unknown;
  readonly expectedType?: string;
  /** The issues expected, all of them, in order. */
  readonly want: readonly Want[];
}

const patient = (fields: Record<string, unknown> = {}) => ({ resourceType: 'Patient', ...fields });
const observation = (fields: Record<string, unknown> = {}) => ({
  resourceType: 'Observation',
  status: 'final',
  code: { text: 'Body weight' },
  ...fields,
});
const ext = { url: 'http://example.org/ext', valueString: 'x' };

const rows: [string, Row][] = [
  // The root must be an object naming a known resource type.
  ['minimal Patient', { given: patient(), want: [] }],
  [
    'root is an array',
    { given: [patient()], want: [{ code: 'structure', expression: 'Resource' }] },
  ],
  ['root is null', { given: null, want: [{ code: 'structure', expression: 'Resource' }] }],
  [
    'missing resourceType',
    {
      given: { active: true },
      want: [
        {
          code: 'required',
          expression: 'Resource.resourceType',
          diagnostics: 'Resource.resourceType is required',
        },
      ],
    },
  ],
  [
    'resourceType is not a string',
    { given: { resourceType: 1 }, want: [{ code: 'value', expression: 'Resource.resourceType' }] },
  ],
  [
    'unknown resourceType',
    {
      given: { resourceType: 'Patinet' },
      want: [{ code: 'value', diagnostics: 'Unknown resource type "Patinet"' }],
    },
  ],
  [
    'resourceType naming an Object.prototype member',
    { given: { resourceType: 'constructor' }, want: [{ code: 'value' }] },
  ],
  ['expectedType matches', { given: patient(), expectedType: 'Patient', want: [] }],
  [
    'expectedType mismatch names both types',
    {
      given: observation(),
      expectedType: 'Patient',
      want: [
        {
          code: 'invalid',
          expression: 'Patient.resourceType',
          diagnostics: 'Expected resourceType "Patient", got "Observation"',
        },
      ],
    },
  ],

  // Unknown properties.
  [
    'unknown element at the root',
    {
      given: patient({ nmae: [{ family: 'Doe' }] }),
      want: [
        {
          code: 'structure',
          expression: 'Patient.nmae',
          diagnostics: 'Unknown element "nmae" in Patient',
        },
      ],
    },
  ],
  [
    'unknown element in a backbone',
    {
      given: patient({ contact: [{ gender: 'male', foo: 1 }] }),
      want: [
        {
          expression: 'Patient.contact[0].foo',
          diagnostics: 'Unknown element "foo" in Patient.contact',
        },
      ],
    },
  ],
  [
    'unknown element in a datatype',
    {
      given: patient({ name: [{ famly: 'Doe' }] }),
      want: [
        {
          expression: 'Patient.name[0].famly',
          diagnostics: 'Unknown element "famly" in HumanName',
        },
      ],
    },
  ],
  [
    'choice group name without type suffix',
    { given: patient({ deceased: true }), want: [{ expression: 'Patient.deceased' }] },
  ],
  [
    'resourceType inside a datatype',
    {
      given: patient({ name: [{ resourceType: 'HumanName', family: 'Doe' }] }),
      want: [{ code: 'structure', expression: 'Patient.name[0].resourceType' }],
    },
  ],

  // _x companions of primitives.
  [
    '_x with an extension on a primitive',
    { given: patient({ birthDate: '1990-01-01', _birthDate: { extension: [ext] } }), want: [] },
  ],
  ['_x without a value', { given: patient({ _birthDate: { id: 'b1' } }), want: [] }],
  [
    '_x for a complex element',
    {
      given: patient({ _name: { id: 'n' } }),
      want: [
        {
          expression: 'Patient._name',
          diagnostics:
            'Unknown element "_name" in Patient ("_" properties exist only for primitive elements)',
        },
      ],
    },
  ],
  [
    '_x for an unknown element',
    {
      given: patient({ _nmae: { id: 'n' } }),
      want: [{ diagnostics: 'Unknown element "_nmae" in Patient' }],
    },
  ],
  [
    '_x is not an object',
    {
      given: patient({ birthDate: '1990', _birthDate: 'x' }),
      want: [{ code: 'structure', expression: 'Patient._birthDate' }],
    },
  ],
  [
    '_x is an empty object',
    {
      given: patient({ birthDate: '1990', _birthDate: {} }),
      want: [{ code: 'structure', expression: 'Patient._birthDate' }],
    },
  ],
  [
    '_x with an unknown property',
    {
      given: patient({ _active: { url: 'x' } }),
      want: [
        { expression: 'Patient._active.url', diagnostics: 'Unknown element "url" in Element' },
      ],
    },
  ],
  [
    '_x array aligned with nulls',
    {
      given: patient({
        name: [{ given: ['Ann', null, 'Bo'], _given: [null, { extension: [ext] }, { id: 'g3' }] }],
      }),
      want: [],
    },
  ],
  [
    '_x array for an array element is not an array',
    {
      given: patient({ name: [{ given: ['Ann'], _given: { id: 'g' } }] }),
      want: [{ expression: 'Patient.name[0]._given', diagnostics: /^Expected an array/ }],
    },
  ],
  [
    '_x array of a different length',
    {
      given: patient({ name: [{ given: ['Ann', 'Bo'], _given: [{ id: 'g' }] }] }),
      want: [{ code: 'structure', expression: 'Patient.name[0]._given' }],
    },
  ],
  [
    '_x array member is not an object',
    {
      given: patient({ name: [{ given: ['Ann'], _given: ['x'] }] }),
      want: [{ expression: 'Patient.name[0]._given[0]' }],
    },
  ],
  [
    'null in a primitive array without a matching _x entry',
    {
      given: patient({ name: [{ given: ['Ann', null] }] }),
      want: [{ code: 'structure', expression: 'Patient.name[0].given[1]' }],
    },
  ],
  [
    'null on both sides at the same index',
    {
      given: patient({ name: [{ given: ['Ann', null], _given: [{ id: 'g' }, null] }] }),
      want: [
        { expression: 'Patient.name[0].given[1]' },
        { expression: 'Patient.name[0]._given[1]' },
      ],
    },
  ],
  [
    'null in an array of complex values',
    {
      given: patient({ name: [null] }),
      want: [{ expression: 'Patient.name[0]', diagnostics: 'Patient.name[0] must not be null' }],
    },
  ],

  // Cardinality.
  [
    'single value where an array is expected',
    {
      given: patient({ name: { family: 'Doe' } }),
      want: [
        {
          code: 'structure',
          expression: 'Patient.name',
          diagnostics: 'Expected an array for Patient.name, got an object',
        },
      ],
    },
  ],
  [
    'array where a single value is expected',
    {
      given: patient({ birthDate: ['1990-01-01'] }),
      want: [{ code: 'structure', expression: 'Patient.birthDate' }],
    },
  ],
  [
    'empty array',
    {
      given: patient({ name: [] }),
      want: [{ code: 'structure', expression: 'Patient.name', diagnostics: /empty array/ }],
    },
  ],
  [
    'null single value',
    {
      given: patient({ active: null }),
      want: [{ code: 'structure', expression: 'Patient.active' }],
    },
  ],
  ['required elements present', { given: observation(), want: [] }],
  [
    'required element missing',
    {
      given: { resourceType: 'Observation', code: { text: 'x' } },
      want: [
        {
          code: 'required',
          expression: 'Observation.status',
          diagnostics: 'Observation.status is required',
        },
      ],
    },
  ],
  [
    'required primitive present only as _x',
    {
      given: observation({
        status: undefined,
        _status: { extension: [{ url: 'http://example.org/dar', valueCode: 'unknown' }] },
      }),
      want: [],
    },
  ],
  [
    'required element missing in a nested datatype',
    {
      given: patient({ extension: [{ valueString: 'x' }] }),
      want: [{ code: 'required', expression: 'Patient.extension[0].url' }],
    },
  ],
  ['one choice member', { given: patient({ deceasedDateTime: '2020-01-01' }), want: [] }],
  [
    'two members of a choice group',
    {
      given: patient({ deceasedBoolean: true, deceasedDateTime: '2020-01-01' }),
      want: [
        {
          code: 'invalid',
          expression: 'Patient.deceased[x]',
          diagnostics:
            'Only one of Patient.deceasedBoolean, Patient.deceasedDateTime may be present',
        },
      ],
    },
  ],
  [
    'two choice members, one only as _x',
    {
      given: patient({ deceasedBoolean: true, _deceasedDateTime: { id: 'd' } }),
      want: [{ code: 'invalid', expression: 'Patient.deceased[x]' }],
    },
  ],
  [
    'required choice group present',
    {
      given: {
        resourceType: 'MedicationRequest',
        status: 'active',
        intent: 'order',
        medicationReference: { reference: 'Medication/1' },
        subject: { reference: 'Patient/1' },
      },
      want: [],
    },
  ],
  [
    'required choice group missing',
    {
      given: {
        resourceType: 'MedicationRequest',
        status: 'active',
        intent: 'order',
        subject: { reference: 'Patient/1' },
      },
      want: [
        {
          code: 'required',
          expression: 'MedicationRequest.medication[x]',
          diagnostics: 'MedicationRequest.medication[x] is required',
        },
      ],
    },
  ],

  // Primitive values.
  [
    'boolean given as a string',
    {
      given: patient({ active: 'true' }),
      want: [
        {
          code: 'value',
          expression: 'Patient.active',
          diagnostics: 'Patient.active: expected a JSON boolean, got a string ("true")',
        },
      ],
    },
  ],
  [
    'invalid date',
    {
      given: patient({ birthDate: '1990-13-01' }),
      want: [
        {
          code: 'value',
          expression: 'Patient.birthDate',
          diagnostics: 'Patient.birthDate: "1990-13-01" is not a valid date',
        },
      ],
    },
  ],
  ['partial date', { given: patient({ birthDate: '1990-02' }), want: [] }],
  [
    'date given as a number',
    {
      given: patient({ birthDate: 1990 }),
      want: [
        {
          code: 'value',
          expression: 'Patient.birthDate',
          diagnostics:
            'Patient.birthDate: expected a JSON string (FHIR type date), got a number (1990)',
        },
      ],
    },
  ],
  [
    'empty string',
    {
      given: patient({ name: [{ family: '' }] }),
      want: [{ code: 'value', expression: 'Patient.name[0].family', diagnostics: /empty string/ }],
    },
  ],
  [
    'code with a leading space',
    {
      given: patient({ gender: ' male' }),
      want: [{ code: 'value', expression: 'Patient.gender' }],
    },
  ],
  ['code with inner spaces', { given: patient({ gender: 'a b' }), want: [] }],
  ['id', { given: patient({ id: 'pat-1.A' }), want: [] }],
  [
    'id with an underscore',
    { given: patient({ id: 'pat_1' }), want: [{ code: 'value', expression: 'Patient.id' }] },
  ],
  [
    'id longer than 64 characters',
    { given: patient({ id: 'a'.repeat(65) }), want: [{ expression: 'Patient.id' }] },
  ],
  ['integer', { given: patient({ multipleBirthInteger: -1 }), want: [] }],
  [
    'integer with a fraction',
    {
      given: patient({ multipleBirthInteger: 1.5 }),
      want: [{ code: 'value', expression: 'Patient.multipleBirthInteger' }],
    },
  ],
  [
    'integer beyond 32 bits',
    {
      given: patient({ multipleBirthInteger: 2147483648 }),
      want: [{ code: 'value', diagnostics: /is not a valid integer \(expected a whole number/ }],
    },
  ],
  [
    'integer given as a string',
    { given: patient({ multipleBirthInteger: '2' }), want: [{ code: 'value' }] },
  ],
  ['positiveInt', { given: patient({ telecom: [{ rank: 1 }] }), want: [] }],
  [
    'positiveInt 0',
    {
      given: patient({ telecom: [{ rank: 0 }] }),
      want: [
        {
          expression: 'Patient.telecom[0].rank',
          diagnostics: 'Patient.telecom[0].rank: 0 is not a valid positiveInt',
        },
      ],
    },
  ],
  ['unsignedInt 0', { given: { resourceType: 'Bundle', type: 'searchset', total: 0 }, want: [] }],
  [
    'unsignedInt negative',
    {
      given: { resourceType: 'Bundle', type: 'searchset', total: -1 },
      want: [{ expression: 'Bundle.total' }],
    },
  ],
  ['decimal', { given: observation({ valueQuantity: { value: 0.5, unit: 'kg' } }), want: [] }],
  [
    'decimal in exponent form',
    { given: observation({ valueQuantity: { value: 1e-7 } }), want: [] },
  ],
  [
    'decimal given as a string',
    {
      given: observation({ valueQuantity: { value: '72.5' } }),
      want: [{ code: 'value', expression: 'Observation.valueQuantity.value' }],
    },
  ],
  [
    'instant',
    { given: patient({ meta: { lastUpdated: '2024-05-01T10:00:00.123+02:00' } }), want: [] },
  ],
  [
    'instant without a time zone',
    {
      given: patient({ meta: { lastUpdated: '2024-05-01T10:00:00' } }),
      want: [{ expression: 'Patient.meta.lastUpdated', diagnostics: /is not a valid instant$/ }],
    },
  ],
  [
    'dateTime with time zone',
    { given: observation({ effectiveDateTime: '2024-05-01T10:00:00Z' }), want: [] },
  ],
  [
    'dateTime without seconds',
    {
      given: observation({ effectiveDateTime: '2024-05-01T10:00' }),
      want: [{ expression: 'Observation.effectiveDateTime' }],
    },
  ],
  [
    'uri with a space',
    {
      given: patient({ extension: [{ url: 'http://example.org/a b', valueBoolean: true }] }),
      want: [{ expression: 'Patient.extension[0].url', diagnostics: /is not a valid uri$/ }],
    },
  ],
  [
    'xhtml has no pattern',
    {
      given: patient({
        text: { status: 'generated', div: '<div xmlns="http://www.w3.org/1999/xhtml">x</div>' },
      }),
      want: [],
    },
  ],
  ['base64Binary', { given: patient({ photo: [{ data: 'AAAA BBBB\ncc==' }] }), want: [] }],
  [
    'base64Binary with a broken block',
    {
      given: patient({ photo: [{ data: 'AAA' }] }),
      want: [{ expression: 'Patient.photo[0].data', diagnostics: /is not a valid base64Binary$/ }],
    },
  ],

  // Complex values.
  [
    'complex value given as a string',
    {
      given: patient({ name: ['Doe'] }),
      want: [
        {
          code: 'structure',
          expression: 'Patient.name[0]',
          diagnostics: 'Expected an object for Patient.name[0], got a string ("Doe")',
        },
      ],
    },
  ],
  [
    'complex value given as an array',
    {
      given: patient({ managingOrganization: [{ reference: 'Organization/1' }] }),
      want: [{ expression: 'Patient.managingOrganization' }],
    },
  ],
  [
    'empty complex value',
    {
      given: patient({ name: [{ family: 'Doe' }, {}] }),
      want: [
        { code: 'structure', expression: 'Patient.name[1]', diagnostics: /must not be empty/ },
      ],
    },
  ],
  [
    'nested path through a backbone',
    {
      given: patient({ contact: [{ name: { family: 7 } }] }),
      want: [{ code: 'value', expression: 'Patient.contact[0].name.family' }],
    },
  ],
  [
    'nested path through arrays',
    {
      given: patient({ name: [{ family: 'Doe' }, { given: [''] }] }),
      want: [{ expression: 'Patient.name[1].given[0]' }],
    },
  ],
  [
    'nested extensions',
    {
      given: patient({ extension: [{ url: 'http://example.org/a', extension: [ext] }] }),
      want: [],
    },
  ],
  [
    'two values in an extension',
    {
      given: patient({
        extension: [{ url: 'http://example.org/a', valueString: 'x', valueBoolean: true }],
      }),
      want: [{ code: 'invalid', expression: 'Patient.extension[0].value[x]' }],
    },
  ],
  [
    'all issues are reported, but not below a wrong shape',
    {
      given: patient({ active: 'yes', name: 'Doe', birthDate: 'soon' }),
      want: [
        { expression: 'Patient.active' },
        { expression: 'Patient.name' },
        { expression: 'Patient.birthDate' },
      ],
    },
  ],

  // Resources inside resources.
  [
    'contained Organization',
    {
      given: patient({ contained: [{ resourceType: 'Organization', id: 'o1', name: 'Acme' }] }),
      want: [],
    },
  ],
  [
    'invalid element of a contained resource',
    {
      given: patient({ contained: [{ resourceType: 'Organization', name: 5 }] }),
      want: [{ code: 'value', expression: 'Patient.contained[0].name' }],
    },
  ],
  [
    'unknown element of a contained resource',
    {
      given: patient({ contained: [{ resourceType: 'Organization', nmae: 'Acme' }] }),
      want: [
        {
          expression: 'Patient.contained[0].nmae',
          diagnostics: 'Unknown element "nmae" in Organization',
        },
      ],
    },
  ],
  [
    'contained resource without resourceType',
    {
      given: patient({ contained: [{ name: 'Acme' }] }),
      want: [{ code: 'required', expression: 'Patient.contained[0].resourceType' }],
    },
  ],
  [
    'contained resource of an unknown type',
    {
      given: patient({ contained: [{ resourceType: 'Acme' }] }),
      want: [{ code: 'value', expression: 'Patient.contained[0].resourceType' }],
    },
  ],
  [
    'contained resource is not an object',
    {
      given: patient({ contained: ['Organization/1'] }),
      want: [{ code: 'structure', expression: 'Patient.contained[0]' }],
    },
  ],
  [
    'Bundle entry resource',
    {
      given: {
        resourceType: 'Bundle',
        type: 'collection',
        entry: [{ fullUrl: 'urn:uuid:1', resource: observation() }, { resource: patient() }],
      },
      want: [],
    },
  ],
  [
    'invalid Bundle entry resource',
    {
      given: {
        resourceType: 'Bundle',
        type: 'collection',
        entry: [{ resource: patient({ birthDate: '1990-13-01' }) }],
      },
      want: [
        {
          expression: 'Bundle.entry[0].resource.birthDate',
          diagnostics: 'Bundle.entry[0].resource.birthDate: "1990-13-01" is not a valid date',
        },
      ],
    },
  ],
  [
    'Reference targets are not checked',
    { given: patient({ managingOrganization: { reference: 'Patient/1' } }), want: [] },
  ],
];

function matcher(want: Want) {
  const { diagnostics, ...rest } = want;
  const fields: Record<string, unknown> = { severity: 'error', ...rest };
  if (diagnostics !== undefined) {
    fields.diagnostics =
      typeof diagnostics === 'string' ? diagnostics : expect.stringMatching(diagnostics);
  }
  return expect.objectContaining(fields);
}

describe('validateResource', () => {
  it.each(rows)('%s', (_name, { given, expectedType, want }) => {
    const issues = validateResource(given, definitionRegistry, { expectedType });
    expect(issues).toEqual(want.map(matcher));
  });

  it('accepts a realistic Patient with zero issues', () => {
    const realistic = {
      resourceType: 'Patient',
      id: 'example',
      meta: {
        versionId: '3',
        lastUpdated: '2024-05-01T10:00:00.000Z',
        profile: ['http://hl7.org/fhir/StructureDefinition/Patient'],
        tag: [{ system: 'http://example.org/tags', code: 'test' }],
      },
      text: {
        status: 'generated',
        div: '<div xmlns="http://www.w3.org/1999/xhtml">Peter James Chalmers</div>',
      },
      contained: [{ resourceType: 'Organization', id: 'org1', name: 'Gastroenterology' }],
      extension: [
        {
          url: 'http://hl7.org/fhir/StructureDefinition/patient-birthPlace',
          valueString: 'Melbourne',
        },
      ],
      identifier: [
        {
          use: 'usual',
          type: {
            coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0203', code: 'MR' }],
          },
          system: 'urn:oid:1.2.36.146.595.217.0.1',
          value: '12345',
          period: { start: '2001-05-06' },
          assigner: { display: 'Acme Healthcare' },
        },
      ],
      active: true,
      name: [
        { use: 'official', family: 'Chalmers', given: ['Peter', 'James'] },
        { use: 'usual', given: ['Jim'] },
        {
          use: 'maiden',
          family: 'Windsor',
          given: ['Peter', 'James'],
          period: { end: '2002' },
        },
      ],
      telecom: [
        { use: 'home' },
        { system: 'phone', value: '(03) 5555 6473', use: 'work', rank: 1 },
      ],
      gender: 'male',
      birthDate: '1974-12-25',
      _birthDate: {
        extension: [
          {
            url: 'http://hl7.org/fhir/StructureDefinition/patient-birthTime',
            valueDateTime: '1974-12-25T14:35:45-05:00',
          },
        ],
      },
      deceasedBoolean: false,
      multipleBirthInteger: 2,
      contact: [
        {
          relationship: [
            { coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v2-0131', code: 'N' }] },
          ],
          name: {
            family: 'du Marché',
            _family: {
              extension: [
                {
                  url: 'http://hl7.org/fhir/StructureDefinition/humanname-own-prefix',
                  valueString: 'VV',
                },
              ],
            },
            given: ['Bénédicte'],
          },
          telecom: [{ system: 'phone', value: '+33 (237) 998327' }],
          gender: 'female',
          period: { start: '2012' },
        },
      ],
      managingOrganization: { reference: '#org1' },
    };
    expect(validateResource(realistic, definitionRegistry)).toEqual([]);
    expect(validateResource(realistic, definitionRegistry, { expectedType: 'Patient' })).toEqual(
      [],
    );
  });

  it(`stops at ${MAX_ISSUES} issues`, () => {
    const given = patient(Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`x${i}`, i])));
    expect(validateResource(given, definitionRegistry)).toHaveLength(MAX_ISSUES);
  });

  it('reports deep nesting instead of overflowing the stack', () => {
    let extension: Record<string, unknown> = { url: 'http://example.org/leaf' };
    for (let i = 0; i < 5000; i++)
      extension = { url: 'http://example.org/x', extension: [extension] };
    const issues = validateResource(patient({ extension: [extension] }), definitionRegistry);
    expect(issues).toEqual([
      expect.objectContaining({
        code: 'structure',
        diagnostics: expect.stringMatching(/nested too deeply/),
      }),
    ]);
    expect(issues[0].expression.split('.')).toHaveLength(MAX_DEPTH + 1);
  });

  it('does not backtrack catastrophically on base64Binary (it would outlast the test)', () => {
    const data = `${'AAAA  '.repeat(5000)}!`;
    const issues = validateResource(patient({ photo: [{ data }] }), definitionRegistry);
    expect(issues).toEqual([expect.objectContaining({ expression: 'Patient.photo[0].data' })]);
  });
});

describe('isBase64Binary', () => {
  const hl7 = compilePattern(definitionRegistry.primitives.base64Binary.pattern ?? '');
  it.each([
    'AAAA',
    'AAAABBBB',
    ' AAAA\tBB==\n',
    'AAA',
    'AA AA',
    'AAAA!',
    ' ',
    'AAAA  BBBB',
    'a+/=',
  ])('agrees with the HL7 regex on %j', (text) => {
    expect(isBase64Binary(text)).toBe(hl7.test(text));
  });
});

describe('compilePattern', () => {
  it('anchors the pattern and compiles it once', () => {
    const regex = compilePattern('[0]|([1-9][0-9]*)');
    expect(compilePattern('[0]|([1-9][0-9]*)')).toBe(regex);
    expect(regex.test('0')).toBe(true);
    expect(regex.test('01')).toBe(false);
    expect(regex.test('x10')).toBe(false);
  });
});

describe('parseResource', () => {
  it('returns a valid resource', () => {
    const value = patient({ active: true });
    expect(parseResource<{ resourceType: string }>(value, definitionRegistry)).toBe(value);
  });

  it('throws ResourceValidationError with the issues', () => {
    const error = (() => {
      try {
        parseResource(patient({ nmae: [], active: 1 }), definitionRegistry);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ResourceValidationError);
    const { issues, message } = error as ResourceValidationError;
    expect(issues.flatMap((issue) => issue.expression)).toEqual(['Patient.nmae', 'Patient.active']);
    expect(message).toBe('Invalid resource: Unknown element "nmae" in Patient (and 1 more issue)');
  });

  it('checks expectedType', () => {
    expect(() =>
      parseResource(patient(), definitionRegistry, { expectedType: 'Observation' }),
    ).toThrow(ResourceValidationError);
  });
});

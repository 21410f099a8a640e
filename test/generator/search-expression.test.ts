import { describe, expect, it } from 'vitest';
import { expressionForBase, splitUnion } from '../../generator/ir/search-expression.js';

type Row<Given, Want> = [name: string, row: { given: Given; want: Want }];
type ForBase = { expression: string; base: string; declaredOn?: string };

// String.raw keeps FHIRPath's backslash escapes as written in the spec: raw`'it\'s'`.
const raw = String.raw;

describe('expressionForBase', () => {
  const rows: Row<ForBase, string>[] = [
    [
      'the first branch of a shared parameter',
      {
        given: {
          expression: 'Patient.gender | Person.gender | Practitioner.gender',
          base: 'Patient',
        },
        want: 'Patient.gender',
      },
    ],
    [
      'a middle branch',
      {
        given: {
          expression: 'Patient.gender | Person.gender | Practitioner.gender',
          base: 'Person',
        },
        want: 'Person.gender',
      },
    ],
    [
      'several own branches, in order',
      {
        given: {
          expression:
            'DocumentReference.masterIdentifier | DocumentManifest.identifier | DocumentReference.identifier',
          base: 'DocumentReference',
        },
        want: 'DocumentReference.masterIdentifier | DocumentReference.identifier',
      },
    ],
    [
      'branches in parentheses',
      {
        given: {
          expression:
            '(Observation.value.ofType(Quantity)) | (Observation.value.ofType(SampledData))',
          base: 'Observation',
        },
        want: '(Observation.value.ofType(Quantity)) | (Observation.value.ofType(SampledData))',
      },
    ],
    [
      'a parenthesized branch among plain ones',
      {
        given: {
          expression: 'Observation.effective | (RiskAssessment.occurrence.ofType(dateTime))',
          base: 'RiskAssessment',
        },
        want: '(RiskAssessment.occurrence.ofType(dateTime))',
      },
    ],
    [
      'a branch with a function call',
      {
        given: {
          expression:
            'AllergyIntolerance.patient | Observation.subject.where(resolve() is Patient)',
          base: 'Observation',
        },
        want: 'Observation.subject.where(resolve() is Patient)',
      },
    ],
    [
      'a type whose name another type starts with',
      {
        given: { expression: 'Observation.code | ObservationDefinition.code', base: 'Observation' },
        want: 'Observation.code',
      },
    ],
    [
      'a type that starts with another type’s name',
      {
        given: {
          expression: 'Observation.code | ObservationDefinition.code',
          base: 'ObservationDefinition',
        },
        want: 'ObservationDefinition.code',
      },
    ],
    [
      'a composite’s bare type name',
      { given: { expression: 'Observation', base: 'Observation' }, want: 'Observation' },
    ],
    [
      'a quoted `|`',
      {
        given: { expression: "Patient.name.where(use = 'a|b') | Person.name", base: 'Patient' },
        want: "Patient.name.where(use = 'a|b')",
      },
    ],
    [
      'no spaces around `|`',
      {
        given: { expression: 'Patient.gender|Person.gender', base: 'Person' },
        want: 'Person.gender',
      },
    ],
    [
      'Resource rewritten to the concrete type',
      {
        given: { expression: 'Resource.id', base: 'Patient', declaredOn: 'Resource' },
        want: 'Patient.id',
      },
    ],
    [
      'a longer Resource path',
      {
        given: {
          expression: 'Resource.meta.lastUpdated',
          base: 'Observation',
          declaredOn: 'Resource',
        },
        want: 'Observation.meta.lastUpdated',
      },
    ],
    [
      'DomainResource rewritten to the concrete type',
      {
        given: { expression: 'DomainResource.text', base: 'Patient', declaredOn: 'DomainResource' },
        want: 'Patient.text',
      },
    ],
    [
      'every Resource branch rewritten, parenthesized or not',
      {
        given: {
          expression: '(Resource.meta.tag) | Resource.meta.security | ResourceX.a',
          base: 'Patient',
          declaredOn: 'Resource',
        },
        want: '(Patient.meta.tag) | Patient.meta.security | ResourceX.a',
      },
    ],
    [
      'fallback: no branch names a type (HL7’s InsurancePlan-name)',
      { given: { expression: 'name | alias', base: 'InsurancePlan' }, want: 'name | alias' },
    ],
    [
      'fallback: no branch names this type',
      {
        given: { expression: 'Person.gender | Practitioner.gender', base: 'Patient' },
        want: 'Person.gender | Practitioner.gender',
      },
    ],
  ];
  it.each(rows)('%s', (_name, { given: { expression, base, declaredOn = base }, want }) => {
    expect(expressionForBase(expression, base, declaredOn)).toBe(want);
  });

  // No R4 Resource-level parameter has a union today; each branch must be rewritten, or
  // `Resource.meta.security` would select nothing on a Patient.
  it('rewrites every branch of a union declared on Resource', () => {
    expect(
      expressionForBase('Resource.meta.tag | Resource.meta.security', 'Patient', 'Resource'),
    ).toBe('Patient.meta.tag | Patient.meta.security');
  });
});

describe('splitUnion', () => {
  const rows: Row<string, string[]>[] = [
    ['one branch', { given: 'Patient.name', want: ['Patient.name'] }],
    [
      'two branches',
      { given: 'Patient.name | Person.name', want: ['Patient.name', 'Person.name'] },
    ],
    ['no spaces', { given: 'Patient.name|Person.name', want: ['Patient.name', 'Person.name'] }],
    [
      'whitespace trimmed',
      { given: '  Patient.name  |  Person.name  ', want: ['Patient.name', 'Person.name'] },
    ],
    [
      'a union inside parentheses is one branch',
      { given: '(A.b | C.d) | E.f', want: ['(A.b | C.d)', 'E.f'] },
    ],
    [
      'a union inside a function call',
      { given: 'A.b.where(c | d) | E.f', want: ['A.b.where(c | d)', 'E.f'] },
    ],
    ['nested parentheses', { given: '((A.b) | (C.d)) | E.f', want: ['((A.b) | (C.d))', 'E.f'] }],
    [
      'a quoted `|`',
      { given: "A.b.where(c = 'x|y') | D.e", want: ["A.b.where(c = 'x|y')", 'D.e'] },
    ],
    [
      'a quoted `|` outside parentheses',
      { given: "A.b = 'x|y' | D.e", want: ["A.b = 'x|y'", 'D.e'] },
    ],
    [
      'a quoted parenthesis',
      { given: "A.b.where(c = '(') | D.e", want: ["A.b.where(c = '(')", 'D.e'] },
    ],
    [
      'an escaped quote',
      { given: raw`A.b.where(c = 'it\'s|x') | D.e`, want: [raw`A.b.where(c = 'it\'s|x')`, 'D.e'] },
    ],
    [
      'an escaped backslash, then an escaped quote',
      {
        given: raw`A.b.where(c = 'x\\\'|y') | D.e`,
        want: [raw`A.b.where(c = 'x\\\'|y')`, 'D.e'],
      },
    ],
    ['empty branches dropped', { given: 'A.b | | C.d', want: ['A.b', 'C.d'] }],
    ['a leading and a trailing `|`', { given: '| A.b |', want: ['A.b'] }],
    ['the empty expression', { given: '', want: [] }],
  ];
  it.each(rows)('%s', (_name, { given, want }) => {
    expect(splitUnion(given)).toStrictEqual(want);
  });

  // A quote after an even run of backslashes closes the literal: 'x\\' is the string `x\`.
  it('closes a literal that ends in an escaped backslash', () => {
    expect(splitUnion(raw`A.b.where(c = 'x\\') | D.e`)).toStrictEqual([
      raw`A.b.where(c = 'x\\')`,
      'D.e',
    ]);
  });
});

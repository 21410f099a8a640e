/**
 * Search parameters in the IR (generator/ir/build-search.ts): which apply to each resource type
 * and with which expression, targets, modifiers and components; on the fixture spec, and on a few
 * in-memory specs. Arguments and reverse references are in search-arguments.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { buildIR } from '../../generator/ir/build-ir.js';
import type { SearchParameterIR } from '../../generator/ir/ir-types.js';
import { parameter, resourceIn, type Row } from './fixture-ir.js';
import { definition, fixtureWith, searchParameter } from './spec-builders.js';

describe('search parameters per base', () => {
  it.each<Row<string, Partial<SearchParameterIR>>>([
    // clinical-identifier is shared by Observation and Patient: each keeps its own branch.
    [
      'own branch of a shared parameter',
      { given: 'Patient.identifier', want: { type: 'token', expression: 'Patient.identifier' } },
    ],
    [
      'the other base’s branch',
      {
        given: 'Observation.identifier',
        want: { type: 'token', expression: 'Observation.identifier' },
      },
    ],
    [
      'own branch, other branches naming absent types',
      { given: 'Patient.gender', want: { expression: 'Patient.gender' } },
    ],
    [
      'own branch among parenthesized ones',
      { given: 'Observation.date', want: { type: 'date', expression: 'Observation.effective' } },
    ],
    [
      'own branch with a where()',
      {
        given: 'Observation.patient',
        want: {
          expression: 'Observation.subject.where(resolve() is Patient)',
          targets: ['Patient'],
        },
      },
    ],
    [
      'two own branches in parentheses',
      {
        given: 'Observation.value-quantity',
        want: {
          argument: 'value_quantity',
          type: 'quantity',
          expression:
            '(Observation.value.ofType(Quantity)) | (Observation.value.ofType(SampledData))',
        },
      },
    ],
    [
      'a kebab-case code',
      {
        given: 'Patient.death-date',
        want: {
          argument: 'death_date',
          type: 'date',
          expression: '(Patient.deceased.ofType(dateTime))',
        },
      },
    ],
    // Resource-level parameters apply to every resource type, rewritten to it.
    [
      'Resource-level _id on Patient',
      { given: 'Patient._id', want: { argument: '_id', type: 'token', expression: 'Patient.id' } },
    ],
    [
      'Resource-level _id on a differential-only resource',
      { given: 'Widget._id', want: { expression: 'Widget.id' } },
    ],
    [
      'Resource-level _id on OperationOutcome',
      { given: 'OperationOutcome._id', want: { expression: 'OperationOutcome.id' } },
    ],
    // Targets: unknown resource types are dropped, the rest sorted.
    [
      'reference targets without absent types',
      { given: 'Observation.subject', want: { type: 'reference', targets: ['Patient'] } },
    ],
    [
      'a reference to its own type',
      { given: 'Patient.link', want: { targets: ['Patient'], expression: 'Patient.link.other' } },
    ],
    ['a parameter from our own folder', { given: 'Widget.owner', want: { targets: ['Patient'] } }],
    ['no targets on a token', { given: 'Patient.gender', want: { targets: [] } }],
    // Modifiers by search type.
    [
      'string modifiers',
      { given: 'Patient.name', want: { modifiers: ['contains', 'exact', 'missing'] } },
    ],
    [
      'token modifiers',
      { given: 'Observation.status', want: { modifiers: ['missing', 'not', 'text'] } },
    ],
    [
      'number modifiers',
      { given: 'Widget.size', want: { type: 'number', modifiers: ['missing'] } },
    ],
    [
      'a composite and its components',
      {
        given: 'Observation.status-value-quantity',
        want: {
          type: 'composite',
          argument: 'status_value_quantity',
          expression: 'Observation',
          modifiers: [],
          components: [
            { code: 'status', expression: 'status' },
            { code: 'value-quantity', expression: 'value.ofType(Quantity)' },
          ],
        },
      },
    ],
    ['the description', { given: 'Widget.label', want: { description: "A Widget's label" } }],
  ])('%s: %s', (_name, { given, want }) => {
    expect(parameter(given)).toMatchObject(want);
  });
});

describe('search parameter descriptions', () => {
  // A shared HL7 parameter's description is "Multiple Resources: \r\n\r\n* [Patient](patient.html):
  // …", a line per base; each base keeps its own line, without the bullet.
  it.each<Row<string, string>>([
    ['the base’s line', { given: 'Patient.birthdate', want: "The patient's date of birth" }],
    [
      'the first base’s line',
      { given: 'Observation.identifier', want: 'The unique id for a particular observation' },
    ],
    ['the last base’s line', { given: 'Patient.identifier', want: 'A patient identifier' }],
  ])('of a shared parameter: %s', (_name, { given, want }) => {
    expect(parameter(given)?.description).toBe(want);
  });

  it('keeps a shared description whole when no line names the base', () => {
    const spec = fixtureWith({
      sps: [
        searchParameter({
          code: 'nickname',
          base: ['Patient'],
          type: 'string',
          description: 'Multiple Resources: \r\n\r\n* [Person](person.html): A nickname\r\n',
        }),
      ],
    });
    expect(
      resourceIn(buildIR(spec).resources, 'Patient').searchParameters.find(
        (p) => p.code === 'nickname',
      )?.description,
    ).toBe('Multiple Resources: \r\n\r\n* [Person](person.html): A nickname\r\n');
  });

  it('keeps a one-base parameter’s description', () => {
    expect(parameter('Patient.link')?.description).toBe('All patients linked to the given patient');
  });
});

describe('parameters declared on DomainResource', () => {
  // A resource that derives from Resource directly, as Binary, Bundle and Parameters do.
  const blob = definition(
    'Blob',
    'resource',
    [
      ['Blob.id', 'id'],
      ['Blob.data', 'string'],
    ],
    'http://hl7.org/fhir/StructureDefinition/Resource',
  );
  const text = searchParameter({
    id: 'DomainResource-text',
    code: '_text',
    base: ['DomainResource'],
    type: 'string',
    expression: 'DomainResource.text',
  });
  const resources = buildIR(fixtureWith({ sds: [blob], sps: [text] })).resources;

  it('apply to DomainResources, rewritten', () => {
    expect(
      resourceIn(resources, 'Patient').searchParameters.find((p) => p.code === '_text')?.expression,
    ).toBe('Patient.text');
  });

  // Binary, Bundle and Parameters have no text: DomainResource's `_text` is not theirs.
  it('do not apply to a resource that derives from Resource directly', () => {
    expect(resourceIn(resources, 'Blob').searchParameters.map((p) => p.code)).toStrictEqual([
      '_id',
    ]);
  });
});

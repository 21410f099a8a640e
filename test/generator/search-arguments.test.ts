/**
 * GraphQL search arguments (snake_case, modifiers as suffixes) and reference targets in the IR
 * (generator/ir/build-search.ts), on the fixture spec and a few in-memory specs.
 */
import { describe, expect, it } from 'vitest';
import { buildIR } from '../../generator/ir/build-ir.js';
import type { ResourceIR, SearchArgumentIR } from '../../generator/ir/ir-types.js';
import { compareStrings } from '../../generator/ir/naming.js';
import { argument, ir, resourceIn, type Row } from './fixture-ir.js';
import { fixtureWith, searchParameter } from './spec-builders.js';

describe('search arguments', () => {
  it.each<Row<string, SearchArgumentIR | undefined>>([
    ['a parameter’s own argument', { given: 'Patient.name', want: { name: 'name', code: 'name' } }],
    [
      'a modifier suffix',
      {
        given: 'Patient.name_exact',
        want: { name: 'name_exact', code: 'name', modifier: 'exact' },
      },
    ],
    [
      'a modifier on a kebab-case code',
      {
        given: 'Patient.death_date_missing',
        want: { name: 'death_date_missing', code: 'death-date', modifier: 'missing' },
      },
    ],
    [
      'a modifier on _id',
      { given: 'Patient._id_not', want: { name: '_id_not', code: '_id', modifier: 'not' } },
    ],
    [
      'token :text',
      {
        given: 'Observation.status_text',
        want: { name: 'status_text', code: 'status', modifier: 'text' },
      },
    ],
    [
      'a kebab-case code',
      {
        given: 'Observation.value_quantity',
        want: { name: 'value_quantity', code: 'value-quantity' },
      },
    ],
    [
      'no modifiers on a composite',
      { given: 'Observation.status_value_quantity_missing', want: undefined },
    ],
    ['no :exact on a token', { given: 'Patient.gender_exact', want: undefined }],
    ['no kebab-case argument', { given: 'Patient.death-date', want: undefined }],
  ])('%s: %s', (_name, { given, want }) => {
    expect(argument(given)).toStrictEqual(want);
  });

  it('sorts each resource’s arguments by name', () => {
    for (const resource of ir.resources) {
      const argumentNames = resource.searchArguments.map((a) => a.name);
      expect(argumentNames).toStrictEqual([...argumentNames].sort(compareStrings));
    }
  });

  it('lets a real parameter win over a modifier argument of the same name', () => {
    const spec = fixtureWith({
      sps: [
        searchParameter({
          code: 'gender-text',
          base: ['Patient'],
          type: 'string',
          expression: 'Patient.gender',
        }),
      ],
    });
    const patient = resourceIn(buildIR(spec).resources, 'Patient');
    expect(patient.searchArguments.find((a) => a.name === 'gender_text')).toStrictEqual({
      name: 'gender_text',
      code: 'gender-text',
    });
  });

  // Two codes that spell one argument (`given-name`, `given_name`: toArgumentName maps both to
  // given_name) would leave one parameter unsearchable: the generator stops and names both, with
  // or without modifiers.
  const clash =
    'Patient: search parameters given-name and given_name would both be the GraphQL argument given_name; change one of the codes';
  it.each<Row<string, string>>([
    ['string, with modifiers', { given: 'string', want: clash }],
    ['composite, without modifiers', { given: 'composite', want: clash }],
  ])('fails when two codes map to the same argument name: %s', (_name, { given, want }) => {
    const spec = fixtureWith({
      sps: ['given-name', 'given_name'].map((code) =>
        searchParameter({ code, base: ['Patient'], type: given, expression: 'Patient' }),
      ),
    });
    expect(() => buildIR(spec)).toThrow(want);
  });
});

describe('reference targets', () => {
  it.each<Row<string, ResourceIR['referenceTargets']>>([
    [
      'Observation (two parameters to one type)',
      { given: 'Observation', want: [{ target: 'Patient', parameters: ['patient', 'subject'] }] },
    ],
    [
      'Patient (to its own type)',
      { given: 'Patient', want: [{ target: 'Patient', parameters: ['link'] }] },
    ],
    ['Widget', { given: 'Widget', want: [{ target: 'Patient', parameters: ['owner'] }] }],
    ['OperationOutcome (no reference parameter)', { given: 'OperationOutcome', want: [] }],
  ])('%s', (_name, { given, want }) => {
    expect(resourceIn(ir.resources, given).referenceTargets).toStrictEqual(want);
  });

  it('points a reference to Resource at every resource type, with no typed reverse fields', () => {
    const spec = fixtureWith({
      sps: [
        searchParameter({
          code: 'focus',
          base: ['Observation'],
          type: 'reference',
          target: ['Resource'],
        }),
      ],
    });
    const resources = buildIR(spec).resources;
    expect(
      resourceIn(resources, 'Observation').searchParameters.find((p) => p.code === 'focus')
        ?.targets,
    ).toStrictEqual(['Observation', 'OperationOutcome', 'Patient', 'Widget']);
    // A parameter that may point to any resource is served by the generic reverse fields.
    expect(resourceIn(resources, 'Observation').referenceTargets).toStrictEqual([
      { target: 'Patient', parameters: ['patient', 'subject'] },
    ]);
  });
});

import { buildSchema, parse, type FieldNode, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import {
  SLICE_KEY,
  applyFhirDirectives,
  hasFhirDirectives,
  sliceKeyPath,
  sliceKeySelection,
} from '../../runtime/graphql/directives.js';

/**
 * What graphql-js returns on Patient/example for
 * `{ identifier { system value } active name { use text given family } }`.
 */
const patient = {
  identifier: [{ system: 'urn:oid:1', value: '12345' }],
  active: true,
  name: [
    { use: 'official', text: null, given: ['Peter', 'James'], family: 'Chalmers' },
    { use: 'usual', text: null, given: ['Jim'], family: null },
    { use: 'maiden', text: null, given: ['Peter', 'James'], family: 'Windsor' },
  ],
};

const run = (query: string, data: Record<string, unknown>, variables = {}) =>
  applyFhirDirectives(data, { document: parse(query), variables });

describe('applyFhirDirectives', () => {
  it.each<[string, { query: string; data?: Record<string, unknown>; want: unknown }]>([
    [
      'no directives: the data, absent values left out',
      {
        query: '{ active name { text family } }',
        want: {
          active: true,
          name: [{ family: 'Chalmers' }, {}, { family: 'Windsor' }],
        },
      },
    ],
    [
      '@flatten on lists: children become lists appended across items',
      {
        query:
          '{ identifier @flatten { system value } active name @flatten { text given family } }',
        want: {
          system: ['urn:oid:1'],
          value: ['12345'],
          active: true,
          given: ['Peter', 'James', 'Jim', 'Peter', 'James'],
          family: ['Chalmers', 'Windsor'],
        },
      },
    ],
    [
      '@flatten on a single object: children keep their own shape',
      {
        query: '{ code @flatten { text coding { code } } }',
        data: { code: { text: 'weight', coding: [{ code: 'a' }] } },
        want: { text: 'weight', coding: [{ code: 'a' }] },
      },
    ],
    [
      '@first inside @flatten: the first item of each source',
      {
        query: '{ name @flatten { given @first } }',
        want: { given: ['Peter', 'Jim', 'Peter'] },
      },
    ],
    [
      '@first alone: the first item, as a single value',
      {
        query: '{ name @first { family } }',
        want: { name: { family: 'Chalmers' } },
      },
    ],
    [
      '@singleton under @flatten: one value, not a list',
      {
        query: '{ identifier @flatten { system @singleton value @singleton } }',
        want: { system: 'urn:oid:1', value: '12345' },
      },
    ],
    [
      '@flatten @first then @singleton',
      {
        query: '{ name @flatten @first { given family @singleton } }',
        want: { given: ['Peter', 'James'], family: 'Chalmers' },
      },
    ],
    [
      '@slice with the key computed during execution',
      {
        query: '{ name @flatten @slice(path: "use") { given family @singleton } }',
        data: {
          name: patient.name.map(({ use, given, family }) => ({
            [SLICE_KEY]: use,
            given,
            family,
          })),
        },
        want: {
          'given.official': ['Peter', 'James'],
          'family.official': 'Chalmers',
          'given.usual': ['Jim'],
          'given.maiden': ['Peter', 'James'],
          'family.maiden': 'Windsor',
        },
      },
    ],
    [
      '@slice without a computed key reads the path in the output',
      {
        query: '{ name @flatten @slice(path: "use") { use family } }',
        want: {
          'use.official': ['official'],
          'family.official': ['Chalmers'],
          'use.usual': ['usual'],
          'use.maiden': ['maiden'],
          'family.maiden': ['Windsor'],
        },
      },
    ],
    [
      '@slice(path: "$index")',
      {
        query: '{ name @flatten @slice(path: "$index") { family @singleton } }',
        want: { 'family.0': 'Chalmers', 'family.2': 'Windsor' },
      },
    ],
    [
      '@slice without @flatten: the suffix goes on the children',
      {
        query: '{ name @slice(path: "$index") { family } }',
        want: { name: [{ 'family.0': 'Chalmers' }, {}, { 'family.2': 'Windsor' }] },
      },
    ],
    [
      'a slice suffix carries into a nested @flatten, not into a node of its own',
      {
        query:
          '{ name @flatten @slice(path: "$index") { period @flatten { start } link { end } } }',
        data: {
          name: [
            { period: { start: '2001' }, link: { end: 'x' } },
            { period: { start: '2002' }, link: null },
          ],
        },
        // link is under a flattened list, so it is a list; its own children have no suffix.
        want: { 'start.0': '2001', 'link.0': [{ end: 'x' }], 'start.1': '2002' },
      },
    ],
    [
      'aliases are the output names',
      {
        query: '{ n: name @flatten { f: family } }',
        data: { n: [{ f: 'Chalmers' }, { f: 'Windsor' }] },
        want: { f: ['Chalmers', 'Windsor'] },
      },
    ],
    [
      'duplicate selections merge, as GraphQL does',
      {
        query: '{ name @flatten { family } name { given } }',
        data: { name: [{ family: 'A', given: ['x'] }] },
        want: { family: ['A'], given: ['x'] },
      },
    ],
    [
      'fragments and @skip',
      {
        query:
          '{ ...names identifier @skip(if: true) { system } } fragment names on Patient { name @flatten { ... on HumanName { family } } }',
        want: { family: ['Chalmers', 'Windsor'] },
      },
    ],
    [
      '@include with a variable',
      {
        query:
          'query q($on: Boolean!) { active @include(if: $on) name @flatten { family @include(if: $on) } }',
        want: { active: true, family: ['Chalmers', 'Windsor'] },
      },
    ],
  ])('%s', (_name, { query, data = patient, want }) => {
    expect(run(query, data, { on: true })).toEqual(want);
  });

  it.each<[string, { query: string; error: RegExp }]>([
    [
      '@singleton with a second value across items',
      { query: '{ name @flatten { family @singleton } }', error: /@singleton: family/ },
    ],
    [
      '@singleton with two values in one item',
      { query: '{ name @flatten @first { given @singleton } }', error: /@singleton: given/ },
    ],
    [
      '@slice with @first',
      {
        query: '{ name @first @slice(path: "use") { family } }',
        error: /@slice and @first cannot be used together/,
      },
    ],
    [
      '@flatten on a leaf',
      { query: '{ active @flatten }', error: /apply to fields with a selection/ },
    ],
  ])('refuses %s', (_name, { query, error }) => {
    expect(() => run(query, patient)).toThrow(error);
  });
});

describe('hasFhirDirectives', () => {
  it.each([
    ['{ name { family } }', false],
    ['{ name @include(if: true) { family } }', false],
    ['{ name { given @first } }', true],
    ['{ ...f } fragment f on Patient { name @flatten { family } }', true],
  ])('%s → %s', (query, want) => {
    expect(hasFhirDirectives(parse(query))).toBe(want);
  });
});

describe('sliceKeySelection', () => {
  const schema = buildSchema(`
    type Query { name: [HumanName] coding: [Coding] }
    type HumanName { id: String use: String family: String }
    type Coding { code: String }
    directive @slice(path: String!) on FIELD
  `);
  const field = (query: string) =>
    (parse(query).definitions[0] as OperationDefinitionNode).selectionSet
      .selections[0] as FieldNode;
  const humanName = schema.getType('HumanName')!;

  it('asks for the key on `id`, remembering the path', () => {
    const hidden = sliceKeySelection(field('{ name @slice(path: "use") { family } }'), humanName);
    expect(hidden).toMatchObject({ alias: { value: SLICE_KEY }, name: { value: 'id' } });
    expect(sliceKeyPath(hidden!)).toBe('use');
  });

  it.each([
    ['no @slice', '{ name { family } }', humanName],
    ['$index, known from the position', '{ name @slice(path: "$index") { family } }', humanName],
    ['a type without id', '{ coding @slice(path: "code") { code } }', schema.getType('Coding')!],
  ])('adds nothing for %s', (_name, query, type) => {
    expect(sliceKeySelection(field(query), type)).toBeUndefined();
  });
});

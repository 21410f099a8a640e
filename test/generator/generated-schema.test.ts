/**
 * Checks on the real generated/ folder: its SDL builds into a valid schema. Whether it is what
 * `npm run generate` writes from spec/ today is `npm run generate:check`, which CI runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { buildSchema, GraphQLObjectType, validateSchema, type GraphQLSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { compareStrings } from '../../generator/ir/naming.js';

type Row<Given, Want> = [name: string, row: { given: Given; want: Want }];

const GRAPHQL_DIR = 'generated/graphql';

describe('generated/graphql/*.graphql', () => {
  let schema: GraphQLSchema;

  beforeAll(() => {
    const files = readdirSync(GRAPHQL_DIR)
      .filter((name) => name.endsWith('.graphql'))
      .sort(compareStrings);
    schema = buildSchema(
      files.map((name) => readFileSync(`${GRAPHQL_DIR}/${name}`, 'utf8')).join('\n'),
    );
  }, 30_000);

  it('together form a valid schema', () => {
    expect(validateSchema(schema).map((error) => error.message)).toStrictEqual([]);
  });

  it.each<Row<string, string>>([
    ['a resource type', { given: 'Patient', want: 'GraphQLObjectType' }],
    ['a connection type', { given: 'PatientConnection', want: 'GraphQLObjectType' }],
    ['a create input type', { given: 'PatientCreate', want: 'GraphQLInputObjectType' }],
    ['an update input type', { given: 'PatientUpdate', want: 'GraphQLInputObjectType' }],
    [
      'a backbone input type',
      { given: 'CommunicationPayloadCreate', want: 'GraphQLInputObjectType' },
    ],
    ['a backbone type', { given: 'PatientContact', want: 'GraphQLObjectType' }],
    ['our own resource', { given: 'Bot', want: 'GraphQLObjectType' }],
    ['the resource union', { given: 'AnyResource', want: 'GraphQLUnionType' }],
    ['the JSON scalar', { given: 'JSON', want: 'GraphQLScalarType' }],
  ])('defines %s: %s', (_name, { given, want }) => {
    expect(schema.getType(given)?.constructor.name).toBe(want);
  });

  it.each<Row<[type: string, field: string], string>>([
    ['a read', { given: ['Query', 'Patient'], want: 'Patient' }],
    ['a search', { given: ['Query', 'PatientList'], want: '[Patient]' }],
    ['a paged search', { given: ['Query', 'PatientConnection'], want: 'PatientConnection' }],
    ['a delete', { given: ['Mutation', 'PatientDelete'], want: 'OperationOutcome' }],
    ['a reverse reference', { given: ['Patient', 'ConditionList'], want: '[Condition]' }],
    [
      'a paged reverse reference',
      { given: ['Patient', 'ConditionConnection'], want: 'ConditionConnection' },
    ],
    ['an expanded choice', { given: ['Observation', 'valueQuantity'], want: 'Quantity' }],
    ['a primitive', { given: ['Patient', 'birthDate'], want: 'String' }],
    ['a primitive’s extensions', { given: ['Patient', '_birthDate'], want: 'Element' }],
    ['a repeating datatype', { given: ['Patient', 'name'], want: '[HumanName]' }],
    ['Reference.resource', { given: ['Reference', 'resource'], want: 'AnyResource' }],
  ])('has %s: %s', (_name, { given: [type, field], want }) => {
    const object = schema.getType(type);
    expect(object).toBeInstanceOf(GraphQLObjectType);
    expect(String((object as GraphQLObjectType).getFields()[field]?.type)).toBe(want);
  });

  it.each<Row<[field: string, argument: string], string>>([
    ['a kebab-case code as snake_case', { given: ['PatientList', 'address_city'], want: 'String' }],
    ['a modifier suffix', { given: ['PatientList', 'name_exact'], want: 'String' }],
    ['Resource’s _id', { given: ['PatientList', '_id'], want: 'String' }],
    ['a date, which may repeat', { given: ['PatientList', 'birthdate'], want: '[String]' }],
    ['a :missing modifier', { given: ['PatientList', 'birthdate_missing'], want: 'String' }],
    ['the read’s id', { given: ['Patient', 'id'], want: 'ID!' }],
    ['a page size', { given: ['PatientList', '_count'], want: 'Int' }],
    ['sort keys', { given: ['PatientList', '_sort'], want: 'String' }],
    ['paging', { given: ['PatientConnection', '_cursor'], want: 'String' }],
  ])('offers %s: %s', (_name, { given: [field, argument], want }) => {
    const args = schema.getQueryType()!.getFields()[field].args;
    expect(String(args.find((arg) => arg.name === argument)?.type)).toBe(want);
  });

  it('has no SearchValue scalar: every argument has a standard type', () => {
    expect(schema.getType('SearchValue')).toBeUndefined();
  });
});

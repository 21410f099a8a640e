import { GraphQLObjectType, GraphQLSchema, execute, parse, validateSchema } from 'graphql';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildExecutableSchema } from '../../runtime/graphql/build-executable-schema.js';
import { FhirPathBudget } from '../../runtime/graphql/compile-fhirpath.js';
import { prepareFhirQuery } from '../../runtime/graphql/fhir-query.js';

const patient = {
  resourceType: 'Patient',
  id: 'example',
  active: true,
  name: [
    { use: 'official', family: 'Chalmers', given: ['Peter', 'James'] },
    { use: 'usual', given: ['Jim'] },
    { use: 'maiden', family: 'Windsor', given: ['Peter', 'James'] },
  ],
  extension: [
    { url: 'http://example.org/a', valueString: 'first' },
    { url: 'http://example.org/b', valueBoolean: true },
  ],
  _birthDate: { extension: [{ url: 'http://example.org/c', valueCode: 'x' }] },
};

describe('the executable schema built from generated/', () => {
  let schema: GraphQLSchema;
  let patientRoot: GraphQLSchema;
  beforeAll(() => {
    schema = buildExecutableSchema();
    // Instance-level queries ([base]/Patient/x/$graphql) have the resource as their root.
    patientRoot = new GraphQLSchema({
      query: schema.getType('Patient') as GraphQLObjectType,
      types: Object.values(schema.getTypeMap()),
    });
  });

  it('is a valid schema with every resource type', () => {
    expect(validateSchema(schema)).toEqual([]);
    for (const name of [
      'Patient',
      'Observation',
      'Bot',
      'PatientConnection',
      'PatientConnectionEdge',
      'TaskCreate',
      'TaskUpdate',
      'CommunicationPayloadCreate',
      'TaskInput',
    ]) {
      expect(schema.getType(name), name).toBeDefined();
    }
    expect(Object.keys(schema.getQueryType()!.getFields())).toContain('PatientList');
    expect(Object.keys(schema.getMutationType()!.getFields())).toContain('BotCreate');
  });

  // As the server runs a query: FHIR's forms fitted to the schema's types, then validated.
  const run = async (query: string) => {
    const prepared = prepareFhirQuery(patientRoot, parse(query));
    expect(prepared.errors).toEqual([]);
    return execute({
      schema: patientRoot,
      document: prepared.executable,
      rootValue: patient,
      contextValue: { fhirpath: new FhirPathBudget(1_000) },
    });
  };

  it.each([
    [
      'use filter, unquoted as FHIR writes it',
      '{ name(use: official) { family } }',
      { name: [{ family: 'Chalmers' }] },
    ],
    ['use filter, quoted', '{ name(use: "usual") { given } }', { name: [{ given: ['Jim'] }] }],
    [
      'repeating child matches any item',
      '{ name(given: "James") { use } }',
      { name: [{ use: 'official' }, { use: 'maiden' }] },
    ],
    [
      '_offset then _count',
      '{ name(_offset: 1, _count: 1) { use } }',
      { name: [{ use: 'usual' }] },
    ],
    [
      'extension(url:)',
      '{ extension(url: "http://example.org/b") { valueBoolean } }',
      { extension: [{ valueBoolean: true }] },
    ],
    [
      'fhirpath',
      '{ name(fhirpath: "family.exists()") { use } }',
      { name: [{ use: 'official' }, { use: 'maiden' }] },
    ],
    [
      'primitive extension _birthDate',
      '{ _birthDate { extension { url valueCode } } }',
      { _birthDate: { extension: [{ url: 'http://example.org/c', valueCode: 'x' }] } },
    ],
    [
      'missing elements are null',
      '{ gender birthDate contact { name { family } } }',
      { gender: null, birthDate: null, contact: null },
    ],
  ])('%s', async (_name, query, want) => {
    const result = await run(query);
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual(want);
  });

  it('reports a bad FHIRPath expression as a field error', async () => {
    const result = await run('{ name(fhirpath: "family.(") { use } }');
    expect(result.errors?.[0].message).toMatch(/not a valid FHIRPath expression/);
    expect(result.data).toEqual({ name: null });
  });

  it.each([
    ['an unknown field', '{ nmae { family } }', /Cannot query field "nmae"/],
    ['an unknown filter argument', '{ name(colour: red) { family } }', /Unknown argument "colour"/],
    [
      'an object as a search value',
      '{ name(use: {a: 1}) { family } }',
      /String cannot represent a non string value/,
    ],
  ])('rejects %s before execution', (_name, query, message) => {
    const { errors } = prepareFhirQuery(patientRoot, parse(query));
    expect(errors.map((e) => e.message).join('\n')).toMatch(message);
  });

  it('takes search arguments with modifier suffixes on root lists', () => {
    const args = schema
      .getQueryType()!
      .getFields()
      .PatientList.args.map((a) => a.name);
    expect(args).toEqual(
      expect.arrayContaining([
        'name',
        'name_exact',
        'name_contains',
        'gender_not',
        'birthdate_missing',
        'address_city',
        '_count',
        '_offset',
        '_sort',
      ]),
    );
    const reverse = (schema.getType('Patient') as GraphQLObjectType)
      .getFields()
      .ConditionList.args.map((a) => a.name);
    expect(reverse).toEqual(
      expect.arrayContaining(['_reference', 'clinical_status', 'code', '_count']),
    );
  });
});

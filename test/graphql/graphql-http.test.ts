import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const resources = [
  {
    resourceType: 'Patient',
    id: 'gp1',
    name: [
      { use: 'official', family: 'Chalmers', given: ['Peter'] },
      { use: 'nickname', given: ['Jim'] },
    ],
    gender: 'male',
    address: [{ city: 'Boston' }],
  },
  {
    resourceType: 'Patient',
    id: 'gp2',
    name: [{ family: 'Windsor', given: ['Anne'] }],
    gender: 'female',
    address: [{ city: 'Boston' }],
  },
  {
    resourceType: 'Observation',
    id: 'go1',
    status: 'final',
    code: { text: 'weight' },
    subject: { reference: 'Patient/gp1' },
    valueQuantity: { value: 70, unit: 'kg' },
  },
  {
    resourceType: 'DiagnosticReport',
    id: 'gd1',
    status: 'final',
    code: { text: 'panel' },
    subject: { reference: 'Patient/gp1' },
    result: [{ reference: 'Observation/go1' }, { reference: 'Observation/missing' }],
  },
];

describe.each(await availableEngines())('$graphql on %s', (engine) => {
  let server: TestServer;
  const graphql = (body: unknown, token?: string) =>
    server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json' },
      ...(token ? { token } : {}),
    });

  beforeAll(async () => {
    server = await startTestServer(engine);
    const entry = resources.map((resource) => ({
      resource,
      request: { method: 'PUT', url: `${resource.resourceType}/${resource.id}` },
    }));
    expect(
      (
        await server.fhir('/', {
          method: 'POST',
          body: { resourceType: 'Bundle', type: 'transaction', entry },
        })
      ).status,
    ).toBe(200);
  });
  afterAll(() => server?.stop());

  it.each([
    [
      'Patient(id:), unquoted as FHIR writes it',
      '{ Patient(id: gp1) { id name(use: official) { family } gender birthDate } }',
      { Patient: { id: 'gp1', name: [{ family: 'Chalmers' }], gender: 'male', birthDate: null } },
    ],
    [
      'a list with several arguments (all must match)',
      '{ PatientList(address_city: "Boston", gender: female) { id } }',
      { PatientList: [{ id: 'gp2' }] },
    ],
    [
      'a modifier suffix',
      '{ PatientList(family_exact: "Chalmers") { id } }',
      { PatientList: [{ id: 'gp1' }] },
    ],
    [
      'aliases and # comments',
      '{ # a comment\n a: Patient(id: "gp1") { id } b: Patient(id: "gp2") { id } }',
      { a: { id: 'gp1' }, b: { id: 'gp2' } },
    ],
    [
      'a reverse reference',
      '{ Patient(id: gp1) { DiagnosticReportList(_reference: subject) { id } } }',
      { Patient: { DiagnosticReportList: [{ id: 'gd1' }] } },
    ],
    [
      'a resolved reference with an inline fragment',
      '{ Observation(id: go1) { subject { resource { ... on Patient { id gender } } } } }',
      { Observation: { subject: { resource: { id: 'gp1', gender: 'male' } } } },
    ],
    [
      'resource(type:)',
      '{ Observation(id: go1) { subject { resource(type: Patient) { ... on Patient { id } } } } }',
      { Observation: { subject: { resource: { id: 'gp1' } } } },
    ],
    [
      'a connection',
      '{ PatientConnection(_count: 1) { count offset pageSize pagesize edges { mode resource { id } } } }',
      {
        PatientConnection: {
          count: 2,
          offset: 0,
          pageSize: 1,
          pagesize: 1,
          edges: [{ mode: 'match', resource: { id: expect.any(String) } }],
        },
      },
    ],
  ])('%s', async (_name, query, want) => {
    const response = await graphql({ query });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual(want);
  });

  it('walks a connection with its cursors', async () => {
    const first = (
      await (
        await graphql({
          query:
            '{ PatientConnection(_count: 1, _sort: "family") { next last edges { resource { id } } } }',
        })
      ).json()
    ).data.PatientConnection;
    expect(first.edges[0].resource.id).toBe('gp1');
    const next = (
      await (
        await graphql({
          query: `{ PatientConnection(_count: 1, _sort: "family", _cursor: "${first.next}") { previous first edges { resource { id } } } }`,
        })
      ).json()
    ).data.PatientConnection;
    expect(next.edges[0].resource.id).toBe('gp2');
    const back = (
      await (
        await graphql({
          query: `{ PatientConnection(_count: 1, _sort: "family", _cursor: "${next.previous}") { edges { resource { id } } } }`,
        })
      ).json()
    ).data.PatientConnection;
    expect(back.edges[0].resource.id).toBe('gp1');
  });

  it('answers an unresolvable reference with null and an error, 200', async () => {
    const response = await graphql({
      query:
        '{ DiagnosticReport(id: gd1) { result { reference resource { ... on Observation { id } } } } }',
    });
    const body = await response.json();
    expect(response.status).toBe(200);
    expect(body.data.DiagnosticReport.result).toEqual([
      { reference: 'Observation/go1', resource: { id: 'go1' } },
      { reference: 'Observation/missing', resource: null },
    ]);
    expect(body.errors[0]).toMatchObject({
      path: ['DiagnosticReport', 'result', 1, 'resource'],
      extensions: { resource: { resourceType: 'OperationOutcome' } },
    });
  });

  it('runs variables and operationName, GET, and application/graphql bodies', async () => {
    const query =
      'query one($id: ID!) { Patient(id: $id) { id } } query two { PatientList(gender: male) { id } }';
    const posted = await (
      await graphql({ query, variables: { id: 'gp2' }, operationName: 'one' })
    ).json();
    expect(posted.data).toEqual({ Patient: { id: 'gp2' } });
    const got = await (
      await server.fhir(`/$graphql?query=${encodeURIComponent(query)}&operationName=two`)
    ).json();
    expect(got.data).toEqual({ PatientList: [{ id: 'gp1' }] });
    const raw = await (
      await server.fhir('/$graphql', {
        method: 'POST',
        body: '{ Patient(id: gp1) { id } }',
        headers: { 'Content-Type': 'application/graphql' },
      })
    ).json();
    expect(raw.data).toEqual({ Patient: { id: 'gp1' } });
  });

  it('answers at instance level with the resource as the root', async () => {
    const body = await (
      await server.fhir('/Patient/gp1/$graphql', {
        method: 'POST',
        body: JSON.stringify({ query: '{ id name { given } }' }),
        headers: { 'Content-Type': 'application/json' },
      })
    ).json();
    expect(body.data).toEqual({ id: 'gp1', name: [{ given: ['Peter'] }, { given: ['Jim'] }] });
  });

  it('creates, updates and deletes with mutations, validated like REST', async () => {
    const created = await (
      await graphql({
        query:
          'mutation { PatientCreate(res: { resourceType: "Patient", gender: "other" }) { id gender meta { versionId } } }',
      })
    ).json();
    expect(created.data.PatientCreate).toMatchObject({ gender: 'other', meta: { versionId: '1' } });
    const id = created.data.PatientCreate.id;
    const updated = await (
      await graphql({
        query: `mutation { PatientUpdate(id: "${id}", res: { resourceType: "Patient", id: "${id}", gender: "female" }) { gender meta { versionId } } }`,
      })
    ).json();
    expect(updated.data.PatientUpdate).toEqual({ gender: 'female', meta: { versionId: '2' } });
    const invalid = await (
      await graphql({
        query: 'mutation { PatientCreate(res: { birthDate: "1990-13-45" }) { id } }',
      })
    ).json();
    expect(invalid.errors[0].extensions.resource.issue[0].diagnostics).toMatch(/birthDate/);
    const deleted = await (
      await graphql({ query: `mutation { PatientDelete(id: "${id}") { issue { severity } } }` })
    ).json();
    expect(deleted.data.PatientDelete.issue[0].severity).toBe('information');
    expect((await server.fhir(`/Patient/${id}`)).status).toBe(410);
  });

  it.each([
    ['a syntax error', '{ Patient(id: "x" { id } }', /Syntax Error/],
    ['an unknown field', '{ Patient(id: gp1) { colour } }', /Cannot query field "colour"/],
    ['an unknown argument', '{ PatientList(colour: red) { id } }', /Unknown argument "colour"/],
    ['a page size over the limit', '{ PatientList(_count: 100000) { id } }', /maximum page size/],
    [
      'too deep a query',
      `{ Patient(id: gp1) ${'{ link { other { resource { ... on Patient '.repeat(5)}{ id }${' } } } }'.repeat(5)} }`,
      /nested .* levels deep/,
    ],
  ])('refuses %s with 400 and no data', async (_name, query, message) => {
    const response = await graphql({ query });
    const body = await response.json();
    expect(response.status).toBe(400);
    expect(body.data).toBeUndefined();
    expect(body.errors[0].message).toMatch(message);
    expect(body.errors[0].extensions.resource.resourceType).toBe('OperationOutcome');
  });

  it('keeps projects apart and honours scopes', async () => {
    const other = await server.createProject('Other');
    const mine = await (await graphql({ query: '{ PatientList { id } }' }, other.token)).json();
    expect(mine.data.PatientList).toEqual([]);
    const theirs = await (
      await graphql({ query: '{ Patient(id: gp1) { id } }' }, other.token)
    ).json();
    expect(theirs.data.Patient).toBeNull();
    expect(theirs.errors[0].extensions.resource.issue[0].code).toBe('not-found');
    const limited = await server.call(`/admin/projects/${server.project.projectId}/clients`, {
      method: 'POST',
      body: { name: 'obs only', scope: 'system/Observation.rs' },
      token: server.project.token,
    });
    const { clientId, clientSecret } = await limited.json();
    const token = await server.token(clientId, clientSecret);
    const body = await (
      await graphql(
        { query: '{ Observation(id: go1) { id subject { resource { ... on Patient { id } } } } }' },
        token,
      )
    ).json();
    expect(body.data.Observation).toEqual({ id: 'go1', subject: { resource: null } });
    expect(body.errors[0].extensions.resource.issue[0].code).toBe('forbidden');
  });

  it('serves the generated SDL', async () => {
    const response = await server.fhir('/$graphql/schema.graphql');
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('type Patient {');
    expect(text).toContain('extend type Query');
  });
});

describe('GraphQL limits, at and past each', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite', {
      GRAPHIR_GRAPHQL_MAX_SEARCHES: '2',
      GRAPHIR_GRAPHQL_MAX_COST: '500',
      GRAPHIR_GRAPHQL_MAX_DEPTH: '4',
    });
  });
  afterAll(() => server?.stop());
  const status = async (query: string) => {
    const response = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({ query }),
      headers: { 'Content-Type': 'application/json' },
    });
    const body = await response.json();
    return { status: response.status, message: body.errors?.[0]?.message ?? '' };
  };

  it.each([
    [
      'searches: 2 is the limit',
      '{ a: PatientList(_count: 1) { id } b: PatientList(_count: 1) { id } }',
      200,
      '',
    ],
    [
      'searches: 3 is past it',
      '{ a: PatientList(_count: 1) { id } b: PatientList(_count: 1) { id } c: PatientList(_count: 1) { id } }',
      400,
      /3 searches; the maximum is 2/,
    ],
    ['cost: within 500', '{ PatientList(_count: 10) { id gender } }', 200, ''],
    [
      'cost: past 500',
      '{ PatientList(_count: 200) { id gender birthDate } }',
      400,
      /cost is \d+; the maximum is 500/,
    ],
    ['depth: 4 levels', '{ Patient(id: x) { name { period { start } } } }', 200, ''],
    [
      'depth: 5 levels',
      '{ Patient(id: x) { contact { name { period { start } } } } }',
      400,
      /nested 5 levels deep; the maximum is 4/,
    ],
  ])('%s', async (_name, query, want, message) => {
    const got = await status(query);
    if (want === 200) expect(got.message).not.toMatch(/maximum/);
    else {
      expect(got.status).toBe(400);
      expect(got.message).toMatch(message as RegExp);
    }
  });
});

describe('GraphQL introspection', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite');
  });
  afterAll(() => server?.stop());

  it('answers the standard introspection query, the same each time', async () => {
    const { getIntrospectionQuery } = await import('graphql');
    const ask = async () => {
      const response = await server.fhir('/$graphql', {
        method: 'POST',
        body: JSON.stringify({ query: getIntrospectionQuery() }),
        headers: { 'Content-Type': 'application/json' },
      });
      return response.json();
    };
    const first = await ask();
    expect(first.data.__schema.queryType.name).toBe('Query');
    expect(first.data.__schema.types.some((t: { name: string }) => t.name === 'Patient')).toBe(
      true,
    );
    expect(await ask()).toEqual(first);
  }, 60_000);
});

/**
 * GraphQL arguments of standard types, as typed clients and Medplum's documentation write them
 * (`$id: ID!`, `$name: String`, `[String]`, `PatientCreate`, `CommunicationPayloadCreate`), while
 * FHIR's own forms keep working (unquoted values, `_reference` bare or quoted); and queries that
 * differ only in the values written into them sharing one plan (query-shape.ts), with errors that
 * still point into each client's own text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keptQueries } from '../../runtime/graphql/prepared-query-cache.js';
import { compiledExecutions } from '../support/compiled-executions.js';
import { postGraphQL, putResource } from '../support/graphql-post.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe.each(['pglite', 'postgres'] as const)('GraphQL argument types on %s', (engine) => {
  let server: TestServer;
  const graphql = (query: string, variables?: Record<string, unknown>) =>
    postGraphQL(server, query, variables);
  const put = (resource: { resourceType: string; id: string } & Record<string, unknown>) =>
    putResource(server, resource);

  beforeAll(async () => {
    server = await startTestServer(engine);
    await put({
      resourceType: 'Patient',
      id: 'at1',
      active: true,
      birthDate: '1985-04-02',
      name: [
        { use: 'official', family: 'Argwell' },
        { use: 'usual', given: ['Al'] },
      ],
    });
    await put({
      resourceType: 'Patient',
      id: 'at2',
      active: false,
      birthDate: '1995-01-01',
      name: [{ family: 'Argwell' }],
    });
    await put({
      resourceType: 'ServiceRequest',
      id: 'at-sr',
      status: 'active',
      intent: 'order',
      subject: { reference: 'Patient/at1' },
      requester: { display: 'Dr. Nobody (no reference)' },
    });
  });
  afterAll(() => server?.stop());

  it('takes `$id: ID!`, the form of Medplum’s documentation and typed clients', async () => {
    const { status, body } = await graphql(
      'query GetPatient($id: ID!) { Patient(id: $id) { id } }',
      { id: 'at1' },
    );
    expect(status).toBe(200);
    expect(body).toEqual({ data: { Patient: { id: 'at1' } } });
  });

  it('takes `$name: String`, and a null or absent one sets no criterion', async () => {
    const query =
      'query ($name: String, $active: String) { PatientList(name: $name, active: $active, _sort: "_id") { id } }';
    expect((await graphql(query, { name: 'Argwell' })).body.data.PatientList).toEqual([
      { id: 'at1' },
      { id: 'at2' },
    ]);
    expect(
      (await graphql(query, { name: 'Argwell', active: 'true' })).body.data.PatientList,
    ).toEqual([{ id: 'at1' }]);
    expect(
      (await graphql(query, { name: 'Argwell', active: null })).body.data.PatientList,
    ).toHaveLength(2);
  });

  it('takes a `[String]` list for a date, its values ANDed as repeated REST parameters', async () => {
    const query =
      'query ($born: [String]) { PatientList(name: "Argwell", birthdate: $born, _sort: "_id") { id } }';
    const both = await graphql(query, { born: ['ge1980', 'lt1990'] });
    expect(both.body).toEqual({ data: { PatientList: [{ id: 'at1' }] } });
    const one = await graphql(query, { born: 'ge1990' });
    expect(one.body).toEqual({ data: { PatientList: [{ id: 'at2' }] } });
    const withNull = await graphql(query, { born: [null, 'ge1990'] });
    expect(withNull.body).toEqual({ data: { PatientList: [{ id: 'at2' }] } });
  });

  it('reads `$born: String` used for a list argument as a list, as Medplum’s schema types it', async () => {
    const { status, body } = await graphql(
      'query ($born: String) { PatientList(name: "Argwell", birthdate: $born) { id } }',
      { born: 'lt1990' },
    );
    expect(status).toBe(200);
    expect(body).toEqual({ data: { PatientList: [{ id: 'at1' }] } });
  });

  it('keeps FHIR’s unquoted forms: names, numbers and booleans where text is expected', async () => {
    const { status, body } = await graphql(
      '{ Patient(id: at1) { name(use: official) { family } } PatientList(active: true, name: Argwell, _count: 5) { id } }',
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      data: {
        Patient: { name: [{ family: 'Argwell' }] },
        PatientList: [{ id: 'at1' }],
      },
    });
  });

  it('takes `_reference` bare or quoted', async () => {
    for (const reference of ['subject', '"subject"']) {
      const { status, body } = await graphql(
        `{ Patient(id: "at1") { ServiceRequestList(_reference: ${reference}) { id } } }`,
      );
      expect(status, reference).toBe(200);
      expect(body, reference).toEqual({
        data: { Patient: { ServiceRequestList: [{ id: 'at-sr' }] } },
      });
    }
  });

  it('refuses a `_reference` that names no reference parameter, pointing at it', async () => {
    const { status, body } = await graphql(
      '{ Patient(id: "at1") { ServiceRequestList(_reference: "nothing") { id } } }',
    );
    expect(status).toBe(400);
    expect(body.data).toBeUndefined();
    expect(body.errors[0].message).toMatch(/nothing/);
    expect(body.errors[0].locations).toEqual([{ line: 1, column: 55 }]);
  });

  it('resolves a reference with only a display to null, without an error', async () => {
    const { status, body } = await graphql(
      '{ ServiceRequest(id: "at-sr") { requester { display resource { ... on Practitioner { id } } } } }',
    );
    expect(status).toBe(200);
    expect(body).toEqual({
      data: {
        ServiceRequest: { requester: { display: 'Dr. Nobody (no reference)', resource: null } },
      },
    });
  });

  it('runs Medplum’s documented mutation with a `[CommunicationPayloadCreate!]!` variable', async () => {
    const { status, body } = await graphql(
      `
        mutation ($payload: [CommunicationPayloadCreate!]!) {
          CommunicationCreate(
            res: { resourceType: "Communication", status: "completed", payload: $payload }
          ) {
            id
            status
            payload {
              contentString
            }
          }
        }
      `,
      { payload: [{ contentString: 'Hello' }, { contentString: 'again' }] },
    );
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.data.CommunicationCreate).toMatchObject({
      status: 'completed',
      payload: [{ contentString: 'Hello' }, { contentString: 'again' }],
    });
    const stored = await server.fhir(`/Communication/${body.data.CommunicationCreate.id}`);
    expect((await stored.json()).payload).toHaveLength(2);
  });

  it('takes `PatientCreate` and `PatientUpdate` variables', async () => {
    const created = await graphql(
      'mutation ($res: PatientCreate!) { PatientCreate(res: $res) { id gender } }',
      { res: { resourceType: 'Patient', gender: 'female' } },
    );
    expect(created.status).toBe(200);
    const id = created.body.data.PatientCreate.id;
    const updated = await graphql(
      'mutation ($id: ID!, $res: PatientUpdate!) { PatientUpdate(id: $id, res: $res) { id gender } }',
      { id, res: { resourceType: 'Patient', id, gender: 'male' } },
    );
    expect(updated.body).toEqual({ data: { PatientUpdate: { id, gender: 'male' } } });
  });

  it('refuses values that do not fit their argument, with the position in the text as written', async () => {
    // Each query's value at `at` is the one refused.
    const cases: [query: string, message: RegExp, at: string][] = [
      ['{ PatientList(_count: "ten") { id } }', /Int cannot represent/, '"ten"'],
      [
        '{ Patient(id: "at1") { name(_count: 99999999999) { family } } }',
        /non 32-bit signed integer/,
        '99999999999',
      ],
      ['{ PatientList(name: {family: "x"}) { id } }', /String cannot represent/, '{family'],
      ['{ Patient(id: null) { id } }', /null/, 'null'],
    ];
    for (const [query, message, at] of cases) {
      const { status, body } = await graphql(query);
      expect(status, query).toBe(400);
      expect(body.data, query).toBeUndefined();
      expect(body.errors[0].message, query).toMatch(message);
      expect(body.errors[0].locations, query).toEqual([{ line: 1, column: query.indexOf(at) + 1 }]);
    }
  });

  it('tells fields with one name and different values apart, as written', async () => {
    const same = await graphql('{ a: Patient(id: "at1") { id } a: Patient(id: "at1") { id } }');
    expect(same.body).toEqual({ data: { a: { id: 'at1' } } });
    const different = await graphql(
      '{ a: Patient(id: "at1") { id } a: Patient(id: "at2") { id } }',
    );
    expect(different.status).toBe(400);
    expect(different.body.errors[0].message).toMatch(/Fields "a" conflict/);
  });

  it('runs a text that uses a placeholder’s name as written', async () => {
    const { status, body } = await graphql(
      'query ($__lit0: ID!) { Patient(id: $__lit0) { id } x: Patient(id: "at2") { id } }',
      { __lit0: 'at1' },
    );
    expect(status).toBe(200);
    expect(body).toEqual({ data: { Patient: { id: 'at1' }, x: { id: 'at2' } } });
  });
});

describe('queries that differ only in their values', () => {
  let server: TestServer;
  const graphql = (query: string) => postGraphQL(server, query);
  beforeAll(async () => {
    server = await startTestServer('pglite');
    for (let i = 0; i < 30; i++) {
      const response = await server.fhir(`/Patient/shape-${i}`, {
        method: 'PUT',
        body: { resourceType: 'Patient', id: `shape-${i}`, name: [{ family: `F${i}` }] },
      });
      expect(response.status).toBeLessThan(300);
    }
  });
  afterAll(() => server?.stop());

  it('share one kept plan, which is compiled once it recurs', async () => {
    const before = keptQueries(server.schema).entries;
    const compiledBefore = await compiledExecutions(server.url);
    for (let i = 0; i < 30; i++) {
      const { status, body } = await graphql(
        `{ Patient(id: "shape-${i}") { id name { family } } }`,
      );
      expect(status).toBe(200);
      expect(body).toEqual({
        data: { Patient: { id: `shape-${i}`, name: [{ family: `F${i}` }] } },
      });
    }
    expect(keptQueries(server.schema).entries).toBe(before + 1);
    expect(await compiledExecutions(server.url)).toBeGreaterThan(compiledBefore);
  });

  it('answer field errors at the position in each client’s own text', async () => {
    // The plan is made from the first text; the second's values have other lengths, so its
    // second field starts elsewhere.
    const first = await graphql(
      '{ a: Patient(id: "shape-1") { id } b: Patient(id: "none-1") { id } }',
    );
    expect(first.body.errors[0].locations).toEqual([{ line: 1, column: 36 }]);
    const second = await graphql(
      '{ a: Patient(id: "shape-10") { id }\n  b: Patient(id: "a-much-longer-missing-id") { id } }',
    );
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual({ a: { id: 'shape-10' }, b: null });
    expect(second.body.errors[0].path).toEqual(['b']);
    expect(second.body.errors[0].locations).toEqual([{ line: 2, column: 3 }]);
  });
});

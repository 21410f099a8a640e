/**
 * A mutation's `res` whose resourceType or id disagrees with the mutation is refused as REST
 * refuses the same body (400 `invalid` there; here the field is null with that OperationOutcome in
 * its error, status 200 as for any field that fails), and nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedVersions } from '../support/stored-versions.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const OBSERVATION_BODY = { resourceType: 'Observation', status: 'final', code: { text: 'x' } };

describe.each(await availableEngines())('mutations whose res conflicts, on %s', (engine) => {
  let server: TestServer;
  const graphql = async (query: string, variables?: Record<string, unknown>) => {
    const response = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
      headers: { 'Content-Type': 'application/json' },
    });
    return { status: response.status, body: await response.json() };
  };

  beforeAll(async () => {
    server = await startTestServer(engine);
    const put = await server.fhir('/Patient/mc1', {
      method: 'PUT',
      body: { resourceType: 'Patient', id: 'mc1', gender: 'male' },
    });
    expect(put.status).toBe(201);
  });
  afterAll(() => server?.stop());

  it.each([
    {
      name: 'TCreate with another resourceType',
      query:
        'mutation { PatientCreate(res: { resourceType: "Observation", gender: "other" }) { id } }',
      field: 'PatientCreate',
      rest: { method: 'POST', path: '/Patient', body: { ...OBSERVATION_BODY, gender: 'other' } },
    },
    {
      name: 'TCreate with another resourceType, in a variable',
      query: 'mutation ($res: PatientCreate!) { PatientCreate(res: $res) { id } }',
      variables: { res: { resourceType: 'Observation' } },
      field: 'PatientCreate',
      rest: { method: 'POST', path: '/Patient', body: OBSERVATION_BODY },
    },
    {
      name: 'TUpdate with another resourceType',
      query:
        'mutation { PatientUpdate(id: "mc1", res: { resourceType: "Observation", id: "mc1", gender: "female" }) { id } }',
      field: 'PatientUpdate',
      rest: {
        method: 'PUT',
        path: '/Patient/mc1',
        body: { ...OBSERVATION_BODY, id: 'mc1', gender: 'female' },
      },
    },
    {
      name: 'TUpdate with another id',
      query:
        'mutation { PatientUpdate(id: "mc1", res: { resourceType: "Patient", id: "mc2", gender: "female" }) { id } }',
      field: 'PatientUpdate',
      rest: {
        method: 'PUT',
        path: '/Patient/mc1',
        body: { resourceType: 'Patient', id: 'mc2', gender: 'female' },
      },
    },
  ])('refuses $name as REST does, storing nothing', async ({ query, variables, field, rest }) => {
    const before = await storedVersions(server);
    const refusedByRest = await server.fhir(rest.path, { method: rest.method, body: rest.body });
    expect(refusedByRest.status).toBe(400);
    const restIssue = (await refusedByRest.json()).issue[0];

    const { status, body } = await graphql(query, variables);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.data).toEqual({ [field]: null });
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]).toMatchObject({
      path: [field],
      extensions: {
        resource: {
          resourceType: 'OperationOutcome',
          issue: [{ severity: 'error', code: restIssue.code }],
        },
      },
    });

    expect(await storedVersions(server)).toBe(before);
    const kept = await (await server.fhir('/Patient/mc1')).json();
    expect(kept).toMatchObject({ gender: 'male', meta: { versionId: '1' } });
    expect((await server.fhir('/Patient/mc2')).status).toBe(404);
  });

  it('takes the resourceType and id from the mutation when res leaves them out', async () => {
    const created = await graphql(
      'mutation { PatientCreate(res: { gender: "other" }) { id gender } }',
    );
    expect(created.body.errors).toBeUndefined();
    expect(created.body.data.PatientCreate.gender).toBe('other');
    const id = created.body.data.PatientCreate.id;
    const updated = await graphql(
      `mutation { PatientUpdate(id: "${id}", res: { gender: "female" }) { id gender meta { versionId } } }`,
    );
    expect(updated.body.errors).toBeUndefined();
    expect(updated.body.data.PatientUpdate).toEqual({
      id,
      gender: 'female',
      meta: { versionId: '2' },
    });
  });
});

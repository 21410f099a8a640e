import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { storedVersions } from '../support/stored-versions.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const patient = {
  resourceType: 'Patient',
  name: [{ family: 'Chalmers', given: ['Peter'] }],
  gender: 'male',
  birthDate: '1974-12-25',
};

describe.each(await availableEngines())('FHIR REST on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  it('creates, reads, updates, reads versions and history, deletes', async () => {
    const created = await server.fhir('/Patient', { method: 'POST', body: patient });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toMatch(/^application\/fhir\+json/);
    const body = await created.json();
    expect(body).toMatchObject({ ...patient, meta: { versionId: '1' } });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.headers.get('location')).toBe(`${server.base}/Patient/${body.id}/_history/1`);
    expect(created.headers.get('etag')).toBe('W/"1"');

    const read = await server.fhir(`/Patient/${body.id}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(body);

    const updated = await server.fhir(`/Patient/${body.id}`, {
      method: 'PUT',
      body: { ...patient, id: body.id, active: true },
    });
    expect(updated.status).toBe(200);
    expect(await updated.json()).toMatchObject({ active: true, meta: { versionId: '2' } });

    const v1 = await server.fhir(`/Patient/${body.id}/_history/1`);
    expect(await v1.json()).toEqual(body);
    const history = await (await server.fhir(`/Patient/${body.id}/_history`)).json();
    expect(history).toMatchObject({ resourceType: 'Bundle', type: 'history', total: 2 });
    expect(
      history.entry.map(
        (e: { resource: { meta: { versionId: string } } }) => e.resource.meta.versionId,
      ),
    ).toEqual(['2', '1']);

    const deleted = await server.fhir(`/Patient/${body.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    const gone = await server.fhir(`/Patient/${body.id}`);
    expect(gone.status).toBe(410);
    expect(await gone.json()).toMatchObject({
      resourceType: 'OperationOutcome',
      issue: [{ code: 'deleted' }],
    });
    expect((await (await server.fhir(`/Patient/${body.id}/_history`)).json()).total).toBe(3);
  });

  it('creates with a client-assigned id on PUT to an id that does not exist', async () => {
    const response = await server.fhir('/Patient/client-chosen-1', {
      method: 'PUT',
      body: { ...patient, id: 'client-chosen-1' },
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({
      id: 'client-chosen-1',
      meta: { versionId: '1' },
    });
  });

  it('honours If-Match: 412 on a stale version, 200 on the current one', async () => {
    const { id } = await (await server.fhir('/Patient', { method: 'POST', body: patient })).json();
    const stale = await server.fhir(`/Patient/${id}`, {
      method: 'PUT',
      body: { ...patient, id },
      headers: { 'If-Match': 'W/"7"' },
    });
    expect(stale.status).toBe(412);
    expect(await stale.json()).toMatchObject({
      resourceType: 'OperationOutcome',
      issue: [{ code: 'conflict' }],
    });
    const fresh = await server.fhir(`/Patient/${id}`, {
      method: 'PUT',
      body: { ...patient, id },
      headers: { 'If-Match': 'W/"1"' },
    });
    expect(fresh.status).toBe(200);
  });

  it('answers Prefer: return=minimal with no body', async () => {
    const response = await server.fhir('/Patient', {
      method: 'POST',
      body: patient,
      headers: { Prefer: 'return=minimal' },
    });
    expect(response.status).toBe(201);
    expect(await response.text()).toBe('');
    expect(response.headers.get('location')).toMatch(/\/Patient\/[^/]+\/_history\/1$/);
  });

  it('creates conditionally with If-None-Exist', async () => {
    const body = { ...patient, identifier: [{ system: 'urn:test:mrn', value: 'conditional-1' }] };
    const headers = { 'If-None-Exist': 'identifier=urn:test:mrn|conditional-1' };
    const first = await server.fhir('/Patient', { method: 'POST', body, headers });
    expect(first.status).toBe(201);
    const second = await server.fhir('/Patient', { method: 'POST', body, headers });
    expect(second.status).toBe(200);
    expect((await second.json()).id).toBe((await first.json()).id);
  });

  it.each([
    ['an unknown resource', '/Patient/does-not-exist', 404, 'not-found'],
    ['an unknown type', '/Dragon/1', 404, 'not-found'],
    ['an unknown version', '/Patient/does-not-exist/_history/1', 404, 'not-found'],
    ['a malformed version', '/Patient/x/_history/abc', 404, 'not-found'],
  ])('answers %s with an OperationOutcome', async (_name, path, status, code) => {
    const response = await server.fhir(path);
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code }],
    });
  });

  const badWrites: [
    string,
    { method: string; path: string; body?: unknown; headers?: Record<string, string> },
    number,
    RegExp,
  ][] = [
    [
      'invalid JSON',
      { method: 'POST', path: '/Patient', body: '{"resourceType": "Patient",' },
      400,
      /not valid JSON/,
    ],
    [
      'a missing resourceType',
      { method: 'POST', path: '/Patient', body: { name: [{ family: 'x' }] } },
      400,
      /resourceType/,
    ],
    [
      'a resourceType other than the URL',
      {
        method: 'POST',
        path: '/Patient',
        body: { resourceType: 'Observation', status: 'final', code: { text: 'x' } },
      },
      400,
      /must be Patient/,
    ],
    [
      'an id that differs from the URL',
      { method: 'PUT', path: '/Patient/abc', body: { ...patient, id: 'xyz' } },
      400,
      /must equal the id in the URL/,
    ],
    [
      'an unknown element',
      { method: 'POST', path: '/Patient', body: { ...patient, nmae: 'x' } },
      400,
      /Unknown element "nmae"/,
    ],
    [
      'a wrong type',
      { method: 'POST', path: '/Patient', body: { ...patient, birthDate: 1974 } },
      400,
      /birthDate/,
    ],
    [
      'a missing required element',
      {
        method: 'POST',
        path: '/Observation',
        body: { resourceType: 'Observation', code: { text: 'x' } },
      },
      400,
      /Observation.status is required/,
    ],
    [
      'a wrong Content-Type',
      {
        method: 'POST',
        path: '/Patient',
        body: 'name=x',
        headers: { 'Content-Type': 'text/plain' },
      },
      415,
      /Content-Type/,
    ],
    [
      'no body',
      { method: 'POST', path: '/Patient', headers: { 'Content-Type': 'application/fhir+json' } },
      400,
      /.+/,
    ],
  ];
  it.each(badWrites)('refuses %s and stores nothing', async (_name, request, status, message) => {
    const before = await storedVersions(server);
    const response = await server.fhir(request.path, request);
    expect(response.status).toBe(status);
    const outcome = await response.json();
    expect(outcome.resourceType).toBe('OperationOutcome');
    expect(outcome.issue.map((i: { diagnostics: string }) => i.diagnostics).join('\n')).toMatch(
      message,
    );
    expect(await storedVersions(server)).toBe(before);
  });

  it('refuses a body over the size limit with 413 and stores nothing', async () => {
    const small = await startTestServer(engine, { GRAPHIR_MAX_BODY_BYTES: '1000' });
    try {
      const big = { ...patient, name: [{ family: 'x'.repeat(2000) }] };
      const response = await small.fhir('/Patient', { method: 'POST', body: big });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({
        resourceType: 'OperationOutcome',
        issue: [{ code: 'too-costly' }],
      });
      expect(await storedVersions(small)).toBe(0);
    } finally {
      await small.stop();
    }
  });
});

describe('metadata', () => {
  it('lists every resource type, its search parameters and the operations, without a token', async () => {
    const server = await startTestServer('pglite');
    try {
      const response = await server.fhir('/metadata', { token: null });
      expect(response.status).toBe(200);
      const statement = await response.json();
      const resources = statement.rest[0].resource as {
        type: string;
        searchParam: { name: string }[];
        operation: { name: string }[];
      }[];
      expect(resources).toHaveLength(147);
      const patient = resources.find((r) => r.type === 'Patient')!;
      expect(patient.searchParam.map((p) => p.name)).toEqual(
        expect.arrayContaining(['name', 'birthdate', '_id', '_lastUpdated']),
      );
      expect(resources.find((r) => r.type === 'Bot')!.operation.map((o) => o.name)).toEqual([
        'graphql',
        'execute',
      ]);
      expect(statement.rest[0].operation.map((o: { name: string }) => o.name)).toContain('graphql');
    } finally {
      await server.stop();
    }
  });
});

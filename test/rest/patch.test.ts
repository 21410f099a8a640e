/**
 * `PATCH [base]/[type]/[id]` with JSON Patch: the new version answered like an update, the
 * patched resource validated like any write, and each bad patch refused with its status and an
 * OperationOutcome, storing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { storedVersions } from '../support/stored-versions.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const JSON_PATCH = { 'Content-Type': 'application/json-patch+json' };
const patient = {
  resourceType: 'Patient',
  gender: 'male',
  name: [{ family: 'Chalmers', given: ['Peter'] }],
};

describe.each(await availableEngines())('PATCH on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  const create = async (body: object = patient): Promise<string> => {
    const response = await server.fhir('/Patient', { method: 'POST', body });
    expect(response.status).toBe(201);
    return (await response.json()).id;
  };
  const patch = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    server.fhir(path, {
      method: 'PATCH',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { ...JSON_PATCH, ...headers },
    });

  it('applies the operations and answers the new version as an update does', async () => {
    const id = await create();
    const response = await patch(`/Patient/${id}`, [
      { op: 'test', path: '/gender', value: 'male' },
      { op: 'replace', path: '/gender', value: 'female' },
      { op: 'add', path: '/name/0/given/-', value: 'Jim' },
      { op: 'add', path: '/birthDate', value: '1974-12-25' },
      { op: 'copy', from: '/name/0', path: '/name/1' },
      { op: 'remove', path: '/name/1/given' },
      { op: 'move', from: '/name/1/family', path: '/name/1/text' },
    ]);
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('W/"2"');
    expect(response.headers.get('location')).toBe(`${server.base}/Patient/${id}/_history/2`);
    expect(response.headers.get('last-modified')).toBeTruthy();
    const body = await response.json();
    expect(body).toMatchObject({
      resourceType: 'Patient',
      id,
      gender: 'female',
      birthDate: '1974-12-25',
      name: [{ family: 'Chalmers', given: ['Peter', 'Jim'] }, { text: 'Chalmers' }],
      meta: { versionId: '2' },
    });
    expect(await (await server.fhir(`/Patient/${id}`)).json()).toEqual(body);
    // The search index follows the patch.
    const found = await (await server.fhir(`/Patient?_id=${id}&gender=female`)).json();
    expect(found.total).toBe(1);
  });

  it('applies concurrent patches one after another, losing none', async () => {
    const id = await create();
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        patch(`/Patient/${id}`, [{ op: 'add', path: '/name/0/given/-', value: `Concurrent ${i}` }]),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const stored = await (await server.fhir(`/Patient/${id}`)).json();
    expect(stored.meta.versionId).toBe('7');
    expect([...stored.name[0].given].sort()).toEqual(
      ['Peter', ...Array.from({ length: 6 }, (_, i) => `Concurrent ${i}`)].sort(),
    );
  });

  it('honours If-Match: 200 on the current version, 412 on a stale one', async () => {
    const id = await create();
    const fresh = await patch(`/Patient/${id}`, [{ op: 'add', path: '/active', value: true }], {
      'If-Match': 'W/"1"',
    });
    expect(fresh.status).toBe(200);
    const before = await storedVersions(server);
    const stale = await patch(`/Patient/${id}`, [{ op: 'add', path: '/active', value: false }], {
      'If-Match': 'W/"1"',
    });
    expect(stale.status).toBe(412);
    expect(await stale.json()).toMatchObject({
      resourceType: 'OperationOutcome',
      issue: [{ code: 'conflict', diagnostics: expect.stringMatching(/whose version is 2/) }],
    });
    expect(await storedVersions(server)).toBe(before);
  });

  it('answers Prefer: return=minimal with no body', async () => {
    const id = await create();
    const response = await patch(`/Patient/${id}`, [{ op: 'add', path: '/active', value: true }], {
      Prefer: 'return=minimal',
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(response.headers.get('etag')).toBe('W/"2"');
  });

  it('answers 404 for an unknown resource or type and 410 for a deleted one', async () => {
    const ops = [{ op: 'add', path: '/active', value: true }];
    expect((await patch('/Patient/does-not-exist', ops)).status).toBe(404);
    expect((await patch('/Dragon/1', ops)).status).toBe(404);
    const id = await create();
    expect((await server.fhir(`/Patient/${id}`, { method: 'DELETE' })).status).toBe(200);
    const before = await storedVersions(server);
    const gone = await patch(`/Patient/${id}`, ops);
    expect(gone.status).toBe(410);
    expect(await gone.json()).toMatchObject({ issue: [{ code: 'deleted' }] });
    expect(await storedVersions(server)).toBe(before);
  });

  it('needs the update scope, as PUT does', async () => {
    const id = await create();
    const { clientId, clientSecret } = server.project;
    const before = await storedVersions(server);
    for (const scope of ['system/Patient.rs', 'system/Patient.cd', 'system/Observation.u']) {
      const token = await server.token(clientId, clientSecret, scope);
      const response = await server.fhir(`/Patient/${id}`, {
        method: 'PATCH',
        body: JSON.stringify([{ op: 'add', path: '/active', value: true }]),
        headers: JSON_PATCH,
        token,
      });
      expect(response.status).toBe(403);
      expect(await response.json()).toMatchObject({ issue: [{ code: 'forbidden' }] });
    }
    expect(await storedVersions(server)).toBe(before);
    const token = await server.token(clientId, clientSecret, 'system/Patient.u');
    const allowed = await server.fhir(`/Patient/${id}`, {
      method: 'PATCH',
      body: JSON.stringify([{ op: 'add', path: '/active', value: true }]),
      headers: JSON_PATCH,
      token,
    });
    expect(allowed.status).toBe(200);
  });

  const badPatches: [string, unknown, Record<string, string>, number, string, RegExp][] = [
    [
      'a FHIR JSON body',
      [{ op: 'add', path: '/active', value: true }],
      { 'Content-Type': 'application/fhir+json' },
      415,
      'not-supported',
      /Content-Type must be application\/json-patch\+json/,
    ],
    [
      'a FHIRPath Patch (Parameters)',
      { resourceType: 'Parameters', parameter: [] },
      { 'Content-Type': 'application/fhir+json' },
      415,
      'not-supported',
      /FHIRPath Patch is not supported/,
    ],
    ['no body', '', {}, 400, 'required', /no body/],
    ['invalid JSON', '[{"op": "add",', {}, 400, 'structure', /not valid JSON/],
    [
      'an object, not an array',
      { op: 'add', path: '/active', value: true },
      {},
      400,
      'structure',
      /an array of operations/,
    ],
    ['an operation that is not an object', ['add'], {}, 400, 'structure', /is not an object/],
    [
      'an unknown op',
      [{ op: 'merge', path: '/active', value: true }],
      {},
      400,
      'structure',
      /op must be add, remove, replace, move, copy or test, not "merge"/,
    ],
    [
      'an operation without path',
      [{ op: 'remove' }],
      {},
      400,
      'structure',
      /path must be a JSON Pointer/,
    ],
    [
      'a path that is no JSON Pointer',
      [{ op: 'replace', path: 'gender', value: 'female' }],
      {},
      400,
      'structure',
      /path must be a JSON Pointer/,
    ],
    [
      'a bad escape in a path',
      [{ op: 'replace', path: '/gen~2der', value: 'female' }],
      {},
      400,
      'structure',
      /path must be a JSON Pointer/,
    ],
    [
      'add without a value',
      [{ op: 'add', path: '/active' }],
      {},
      400,
      'structure',
      /add needs a value/,
    ],
    [
      'move without from',
      [{ op: 'move', path: '/active' }],
      {},
      400,
      'structure',
      /from must be a JSON Pointer/,
    ],
    [
      'a replace of the whole resource',
      [{ op: 'replace', path: '', value: { resourceType: 'Patient' } }],
      {},
      400,
      'structure',
      /whole resource/,
    ],
    [
      'a path through __proto__',
      [{ op: 'add', path: '/__proto__/active', value: true }],
      {},
      400,
      'structure',
      /names no element/,
    ],
    [
      'a failing test',
      [
        { op: 'replace', path: '/gender', value: 'female' },
        { op: 'test', path: '/name/0/family', value: 'Smith' },
      ],
      {},
      422,
      'processing',
      /operation 1 \(test \/name\/0\/family\): the value is "Chalmers", not "Smith"/,
    ],
    [
      'a replace of an element that is not there',
      [{ op: 'replace', path: '/birthDate', value: '1974-12-25' }],
      {},
      422,
      'processing',
      /\/birthDate does not exist/,
    ],
    [
      'a remove of an element that is not there',
      [{ op: 'remove', path: '/address' }],
      {},
      422,
      'processing',
      /\/address does not exist/,
    ],
    [
      'an add under an element that is not there',
      [{ op: 'add', path: '/contact/0/name', value: { family: 'x' } }],
      {},
      422,
      'processing',
      /\/contact\/0\/name does not exist/,
    ],
    [
      'an index past the end of an array',
      [{ op: 'replace', path: '/name/3', value: { family: 'x' } }],
      {},
      422,
      'processing',
      /\/name\/3 does not exist/,
    ],
    [
      'an array step that is no index',
      [{ op: 'replace', path: '/name/first', value: { family: 'x' } }],
      {},
      422,
      'processing',
      /\/name\/first does not exist/,
    ],
    [
      'a step into a string',
      [{ op: 'replace', path: '/gender/0', value: 'f' }],
      {},
      422,
      'processing',
      /\/gender\/0 does not exist/,
    ],
    [
      'a change of id',
      [{ op: 'replace', path: '/id', value: 'another' }],
      {},
      400,
      'invalid',
      /may not change id/,
    ],
    [
      'a change of resourceType',
      [{ op: 'replace', path: '/resourceType', value: 'Group' }],
      {},
      400,
      'invalid',
      /may not change resourceType/,
    ],
    [
      'a change of meta.versionId',
      [{ op: 'replace', path: '/meta/versionId', value: '7' }],
      {},
      400,
      'invalid',
      /may not change meta.versionId/,
    ],
    [
      'a removal of meta (and its versionId)',
      [{ op: 'remove', path: '/meta' }],
      {},
      400,
      'invalid',
      /may not change meta.versionId/,
    ],
    [
      'a result with an unknown element',
      [{ op: 'add', path: '/nmae', value: [{ family: 'x' }] }],
      {},
      400,
      'structure',
      /Unknown element "nmae"/,
    ],
    [
      'a result with a wrong type',
      [{ op: 'replace', path: '/gender', value: 42 }],
      {},
      400,
      'value',
      /gender/,
    ],
    [
      'a result with an invalid date',
      [{ op: 'add', path: '/birthDate', value: 'yesterday' }],
      {},
      400,
      'value',
      /birthDate/,
    ],
  ];
  it.each(badPatches)(
    'refuses %s and stores nothing',
    async (_name, body, headers, status, code, message) => {
      const id = await create();
      const before = await storedVersions(server);
      const response = await patch(`/Patient/${id}`, body, headers);
      expect(response.status).toBe(status);
      const outcome = await response.json();
      expect(outcome).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ code }] });
      expect(outcome.issue.map((i: { diagnostics: string }) => i.diagnostics).join('\n')).toMatch(
        message,
      );
      expect(await storedVersions(server)).toBe(before);
      expect((await (await server.fhir(`/Patient/${id}`)).json()).meta.versionId).toBe('1');
    },
  );
});

/**
 * `PUT [base]/[type]?[search]`: no match creates, one match is updated, several are a 412; the
 * body's id is checked against what the search found; a search that is not a valid one, or has
 * no criteria, is refused and never taken to match everything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { storedVersions } from '../support/stored-versions.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const withMrn = (mrn: string, extra: object = {}) => ({
  resourceType: 'Patient',
  identifier: [{ system: 'urn:test:mrn', value: mrn }],
  ...extra,
});

describe.each(await availableEngines())('conditional update on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  const put = (query: string, body: unknown, headers: Record<string, string> = {}) =>
    server.fhir(`/Patient?${query}`, { method: 'PUT', body, headers });
  const search = async (query: string) =>
    (await (await server.fhir(`/Patient?${query}`)).json()).entry?.map(
      (e: { resource: object }) => e.resource,
    ) ?? [];

  it('creates when nothing matches, then updates the one match', async () => {
    const created = await put('identifier=urn:test:mrn|u-1', withMrn('u-1', { active: false }));
    expect(created.status).toBe(201);
    const first = await created.json();
    expect(first).toMatchObject({ active: false, meta: { versionId: '1' } });
    expect(created.headers.get('location')).toBe(`${server.base}/Patient/${first.id}/_history/1`);
    expect(created.headers.get('etag')).toBe('W/"1"');

    const updated = await put('identifier=urn:test:mrn|u-1', withMrn('u-1', { active: true }));
    expect(updated.status).toBe(200);
    expect(updated.headers.get('etag')).toBe('W/"2"');
    expect(await updated.json()).toMatchObject({
      id: first.id,
      active: true,
      meta: { versionId: '2' },
    });
    expect(await search('identifier=urn:test:mrn|u-1')).toEqual([
      expect.objectContaining({ id: first.id, active: true }),
    ]);
  });

  it('updates the match when the body names its id', async () => {
    const { id } = await (await put('identifier=urn:test:mrn|u-2', withMrn('u-2'))).json();
    const response = await put('identifier=urn:test:mrn|u-2', { ...withMrn('u-2'), id });
    expect(response.status).toBe(200);
    expect((await response.json()).meta.versionId).toBe('2');
  });

  it('creates with the id of the body when nothing matches and no resource has it', async () => {
    const response = await put('identifier=urn:test:mrn|u-3', {
      ...withMrn('u-3'),
      id: 'chosen-by-client',
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ id: 'chosen-by-client' });
  });

  it('creates again over a deleted resource whose id the body names', async () => {
    await server.fhir('/Patient/deleted-before', {
      method: 'PUT',
      body: { resourceType: 'Patient', id: 'deleted-before' },
    });
    await server.fhir('/Patient/deleted-before', { method: 'DELETE' });
    const response = await put('identifier=urn:test:mrn|u-4', {
      ...withMrn('u-4'),
      id: 'deleted-before',
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ id: 'deleted-before', meta: { versionId: '3' } });
  });

  it('honours If-Match on the match: 200 on its version, 412 on another', async () => {
    const { id } = await (await put('identifier=urn:test:mrn|u-5', withMrn('u-5'))).json();
    const fresh = await put('identifier=urn:test:mrn|u-5', withMrn('u-5'), { 'If-Match': 'W/"1"' });
    expect(fresh.status).toBe(200);
    const before = await storedVersions(server);
    const stale = await put('identifier=urn:test:mrn|u-5', withMrn('u-5'), { 'If-Match': 'W/"1"' });
    expect(stale.status).toBe(412);
    expect(await storedVersions(server)).toBe(before);
    expect((await (await server.fhir(`/Patient/${id}`)).json()).meta.versionId).toBe('2');
  });

  it('needs the update and the search scope', async () => {
    const { clientId, clientSecret } = server.project;
    const before = await storedVersions(server);
    for (const scope of ['system/Patient.rs', 'system/Patient.cud']) {
      const response = await server.fhir('/Patient?identifier=urn:test:mrn|u-6', {
        method: 'PUT',
        body: withMrn('u-6'),
        token: await server.token(clientId, clientSecret, scope),
      });
      expect(response.status).toBe(403);
    }
    expect(await storedVersions(server)).toBe(before);
    const allowed = await server.fhir('/Patient?identifier=urn:test:mrn|u-6', {
      method: 'PUT',
      body: withMrn('u-6'),
      token: await server.token(clientId, clientSecret, 'system/Patient.us'),
    });
    expect(allowed.status).toBe(201);
  });

  describe('refusals', () => {
    let existing: string;
    beforeAll(async () => {
      for (const mrn of ['twin', 'twin', 'taken'])
        await server.fhir('/Patient', { method: 'POST', body: withMrn(mrn) });
      existing = (await search('identifier=urn:test:mrn|taken'))[0].id;
    });

    const refusals: [string, string, unknown, number, string, RegExp][] = [
      [
        'several matches',
        'identifier=urn:test:mrn|twin',
        withMrn('twin'),
        412,
        'duplicate',
        /identifier=urn:test:mrn\|twin matches more than one Patient/,
      ],
      [
        'a body id other than the match',
        'identifier=urn:test:mrn|taken',
        { ...withMrn('taken'), id: 'someone-else' },
        400,
        'invalid',
        /is not the id of the Patient that identifier=urn:test:mrn\|taken matches/,
      ],
      [
        'no search parameter',
        '',
        withMrn('none'),
        400,
        'invalid',
        /Conditional update needs at least one search parameter/,
      ],
      [
        'only result parameters',
        '_count=1&_sort=-_lastUpdated',
        withMrn('none'),
        400,
        'invalid',
        /needs at least one search parameter/,
      ],
      [
        'an unknown search parameter',
        'mrn=taken',
        withMrn('taken'),
        400,
        'invalid',
        /mrn is not a search parameter of Patient/,
      ],
      [
        'an invalid search value',
        'birthdate=yesterday',
        withMrn('none'),
        400,
        'invalid',
        /birthdate/,
      ],
      [
        'an unsupported search parameter',
        '_text=taken',
        withMrn('none'),
        400,
        'not-supported',
        /_text/,
      ],
      [
        'a body of another type',
        'identifier=urn:test:mrn|new',
        { resourceType: 'Group', type: 'person', actual: true },
        400,
        'invalid',
        /must be Patient/,
      ],
      [
        'an invalid body',
        'identifier=urn:test:mrn|new',
        { ...withMrn('new'), birthDate: 'yesterday' },
        400,
        'value',
        /birthDate/,
      ],
      [
        'a stale If-Match when nothing matches',
        'identifier=urn:test:mrn|new',
        withMrn('new'),
        412,
        'conflict',
        /If-Match/,
      ],
    ];
    it.each(refusals)(
      'refuses %s and stores nothing',
      async (name, query, body, status, code, message) => {
        const before = await storedVersions(server);
        const headers: Record<string, string> = name.includes('If-Match')
          ? { 'If-Match': 'W/"1"' }
          : {};
        const response = await put(query, body, headers);
        expect(response.status).toBe(status);
        const outcome = await response.json();
        expect(outcome).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ code }] });
        expect(outcome.issue.map((i: { diagnostics: string }) => i.diagnostics).join('\n')).toMatch(
          message,
        );
        expect(await storedVersions(server)).toBe(before);
      },
    );

    it('refuses with 409 a body id of a resource the search did not match, changing nothing', async () => {
      const before = await storedVersions(server);
      const response = await put('identifier=urn:test:mrn|elsewhere', {
        ...withMrn('elsewhere'),
        id: existing,
      });
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({
        issue: [{ code: 'conflict', diagnostics: expect.stringMatching(/does not match/) }],
      });
      expect(await storedVersions(server)).toBe(before);
      expect(await (await server.fhir(`/Patient/${existing}`)).json()).toMatchObject(
        withMrn('taken'),
      );
    });

    it('answers 404 for an unknown type', async () => {
      const response = await server.fhir('/Dragon?name=x', { method: 'PUT', body: withMrn('x') });
      expect(response.status).toBe(404);
    });
  });
});

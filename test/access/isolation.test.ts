/**
 * Projects are isolated: two projects hold resources with the same ids, and each sees and
 * changes only its own. Another project's resource is 404, exactly as if it did not exist.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { entriesOf, expectOutcome, storedVersions } from './helpers.js';

type Side = 'A' | 'B';
const SIDES: Side[] = ['A', 'B'];
/** Ids present in both projects; each side of the pair order mutates its own set. */
const SHARED = [
  'shared-1',
  ...SIDES.flatMap((s) => [`mut-${s}`, `del-${s}`, `tx-${s}`, `txdel-${s}`]),
];

function resourcesOf(side: Side): any[] {
  return [
    { resourceType: 'Organization', id: 'org-shared', name: `Org-${side}` },
    ...SHARED.map((id) => ({
      resourceType: 'Patient',
      id,
      name: [{ family: `${id}-${side}` }],
      ...(id === 'shared-1'
        ? { managingOrganization: { reference: 'Organization/org-shared' } }
        : {}),
    })),
    ...['only', 'gone', 'ghost'].map((prefix) => ({
      resourceType: 'Patient',
      id: `${prefix}-${side}`,
      name: [{ family: `${prefix}-${side}` }],
      identifier: [{ system: `urn:${prefix}`, value: side }],
    })),
    {
      resourceType: 'Observation',
      id: 'obs-shared',
      status: 'final',
      code: { text: `Obs-${side}` },
      subject: { reference: 'Patient/shared-1' },
    },
  ];
}
/** Which project's content this is: every name and text above ends with `-A` or `-B`. */
const ownerOf = (r: any): string =>
  String(r.name?.[0]?.family ?? r.name ?? r.code?.text)
    .split('-')
    .at(-1)!;
const put = (r: any) => ({
  request: { method: 'PUT', url: `${r.resourceType}/${r.id}` },
  resource: r,
});
const request = (method: string, url: string) => ({ request: { method, url } });
const bundle = (type: string, ...entry: unknown[]) => ({ resourceType: 'Bundle', type, entry });
const patient = (id: string, family: string) => ({
  resourceType: 'Patient',
  id,
  name: [{ family }],
});

describe.each(await availableEngines())('project isolation on %s', (engine) => {
  let server: TestServer;
  const tokens = {} as Record<Side, string>;
  const projects = {} as Record<Side, string>;
  beforeAll(async () => {
    server = await startTestServer(engine);
    const b = await server.createProject('B');
    Object.assign(tokens, { A: server.project.token, B: b.token });
    Object.assign(projects, { A: server.project.projectId, B: b.projectId });
    for (const side of SIDES) {
      const body = bundle('transaction', ...resourcesOf(side).map(put));
      expect((await server.fhir('', { method: 'POST', body, token: tokens[side] })).status).toBe(
        200,
      );
      // A second version of shared-1, so that vread and history have something to tell apart.
      const v2 = { ...resourcesOf(side)[1], active: side === 'A' };
      expect(
        (await server.fhir('/Patient/shared-1', { method: 'PUT', body: v2, token: tokens[side] }))
          .status,
      ).toBe(200);
    }
  });
  afterAll(() => server?.stop());

  describe.each([
    ['A', 'B'],
    ['B', 'A'],
  ] as [Side, Side][])('project %s beside project %s', (me, other) => {
    const as = (path: string, init: Parameters<TestServer['fhir']>[1] = {}) =>
      server.fhir(path, { ...init, token: tokens[me] });
    /** Runs `work`, then checks that the other project's stored versions did not change. */
    const leavesOtherAlone = async (work: () => Promise<void>) => {
      const before = await storedVersions(server, projects[other]);
      await work();
      expect(await storedVersions(server, projects[other])).toBe(before);
    };
    const otherReads = async (path: string) =>
      (await server.fhir(path, { token: tokens[other] })).json();

    it('reads and vreads its own shared-1', async () => {
      const current = await (await as('/Patient/shared-1')).json();
      expect(current).toMatchObject({
        name: [{ family: `shared-1-${me}` }],
        active: me === 'A',
        meta: { versionId: '2' },
      });
      const v1 = await (await as('/Patient/shared-1/_history/1')).json();
      expect(v1.name[0].family).toBe(`shared-1-${me}`);
      expect(v1).not.toHaveProperty('active');
      await expectOutcome(await as('/Patient/shared-1/_history/3'), 404, 'not-found');
    });

    it('sees only its own history of shared-1', async () => {
      const history = await (await as('/Patient/shared-1/_history')).json();
      expect(history.total).toBe(2);
      expect(history.entry.map((e: any) => e.resource.name[0].family)).toEqual([
        `shared-1-${me}`,
        `shared-1-${me}`,
      ]);
    });

    it.each([
      ['_id=shared-1', ['match:Patient/shared-1']],
      [`family=shared-1-${other}`, []],
      [`identifier=urn:only|${other}`, []],
      [`_id=only-${other}`, []],
      ['_id=only-A,only-B', [`match:Patient/only-${me}`]],
      [
        '_id=shared-1&_include=Patient:organization&_revinclude=Observation:subject',
        [
          'match:Patient/shared-1',
          'include:Organization/org-shared',
          'include:Observation/obs-shared',
        ],
      ],
    ] as [string, string[]][])(
      'searching Patient?%s finds only its own',
      async (query, expected) => {
        const found = await (await as(`/Patient?${query}`)).json();
        expect(entriesOf(found).sort()).toEqual([...expected].sort());
        expect(found.total).toBe(expected.filter((e) => e.startsWith('match:')).length);
        expect((found.entry ?? []).map((e: any) => ownerOf(e.resource))).toEqual(
          expected.map(() => me),
        );
      },
    );

    it('a search without criteria lists none of the other project', async () => {
      const bundle = await (await as('/Patient?_count=100')).json();
      expect(bundle.total).toBe(SHARED.length + 3);
      expect(entriesOf(bundle)).toContain(`match:Patient/only-${me}`);
      expect(new Set(bundle.entry.map((e: any) => ownerOf(e.resource)))).toEqual(new Set([me]));
    });

    it.each([
      `/Patient/only-${other}`,
      `/Patient/only-${other}/_history`,
      `/Patient/only-${other}/_history/1`,
    ])('%s (only in the other project) is 404, not 403', async (path) => {
      const outcome = await expectOutcome(await as(path), 404, 'not-found');
      expect(JSON.stringify(outcome)).not.toContain(projects[other]);
    });

    it("updating its own mut-id leaves the other's alone", async () => {
      await leavesOtherAlone(async () => {
        const body = patient(`mut-${me}`, `changed-by-${me}`);
        const response = await as(`/Patient/mut-${me}`, { method: 'PUT', body });
        expect(response.status).toBe(200);
        expect((await response.json()).meta.versionId).toBe('2');
      });
      expect(await otherReads(`/Patient/mut-${me}`)).toMatchObject({
        name: [{ family: `mut-${me}-${other}` }],
        meta: { versionId: '1' },
      });
    });

    it("deleting its own del-id leaves the other's alone", async () => {
      await leavesOtherAlone(async () => {
        expect((await as(`/Patient/del-${me}`, { method: 'DELETE' })).status).toBe(200);
      });
      expect((await as(`/Patient/del-${me}`)).status).toBe(410);
      expect(await otherReads(`/Patient/del-${me}`)).toMatchObject({
        name: [{ family: `del-${me}-${other}` }],
      });
    });

    it("deleting the other project's gone-id changes nothing there", async () => {
      await leavesOtherAlone(async () => {
        const response = await as(`/Patient/gone-${other}`, { method: 'DELETE' });
        expect(response.status).toBe(200);
      });
      expect(await otherReads(`/Patient/gone-${other}`)).toMatchObject({
        id: `gone-${other}`,
        meta: { versionId: '1' },
      });
    });

    // Regression test: deleting an id that does not exist writes nothing (no version-0 tombstone).
    it("after deleting the other project's id it is still 404 here, and nothing was stored", async () => {
      const before = await storedVersions(server, projects[me]);
      expect((await as(`/Patient/ghost-${other}`, { method: 'DELETE' })).status).toBe(200);
      expect(await storedVersions(server, projects[me])).toBe(before);
      await expectOutcome(await as(`/Patient/ghost-${other}`), 404, 'not-found');
    });

    it('a transaction reads and writes only its own', async () => {
      await leavesOtherAlone(async () => {
        const body = bundle(
          'transaction',
          put(patient(`tx-${me}`, `tx-changed-${me}`)),
          request('DELETE', `Patient/txdel-${me}`),
          // A read entry (GET Type/id) would hang PGlite: see transaction-read.test.ts.
          request('GET', 'Patient?_id=shared-1&_include=Patient:organization'),
        );
        const response = await as('', { method: 'POST', body });
        expect(response.status).toBe(200);
        const result = await response.json();
        expect(result.entry[0].response.status).toBe('200 OK');
        const search = result.entry[2].resource;
        expect(entriesOf(search)).toEqual([
          'match:Patient/shared-1',
          'include:Organization/org-shared',
        ]);
        expect(search.entry.map((e: any) => ownerOf(e.resource))).toEqual([me, me]);
        expect(ownerOf(result.entry[0].resource)).toBe(me);
      });
      expect(await otherReads(`/Patient/tx-${me}`)).toMatchObject({
        name: [{ family: `tx-${me}-${other}` }],
        meta: { versionId: '1' },
      });
      expect((await otherReads(`/Patient/txdel-${me}`)).resourceType).toBe('Patient');
    });

    it("a transaction updating the other project's only-id with If-Match fails 412 and writes nothing", async () => {
      const before = await storedVersions(server, projects[me]);
      await leavesOtherAlone(async () => {
        const body = bundle(
          'transaction',
          { ...request('POST', 'Patient'), resource: { resourceType: 'Patient' } },
          {
            request: { method: 'PUT', url: `Patient/only-${other}`, ifMatch: 'W/"1"' },
            resource: { resourceType: 'Patient', id: `only-${other}` },
          },
        );
        const response = await as('', { method: 'POST', body });
        await expectOutcome(response, 412, 'conflict');
      });
      expect(await storedVersions(server, projects[me])).toBe(before);
    });

    it("a batch sees the other project's ids as absent", async () => {
      await leavesOtherAlone(async () => {
        const body = bundle(
          'batch',
          request('GET', `Patient/only-${other}`),
          request('DELETE', `Patient/gone-${other}`),
          request('GET', `Patient?identifier=urn:only|${other}`),
        );
        const result = await (await as('', { method: 'POST', body })).json();
        expect(result.entry[0].response.status).toBe('404');
        expect(result.entry[2].resource.total).toBe(0);
      });
      expect(await otherReads(`/Patient/gone-${other}`)).toMatchObject({
        meta: { versionId: '1' },
      });
    });

    it("If-None-Exist does not match the other project's resource", async () => {
      await leavesOtherAlone(async () => {
        const body = {
          resourceType: 'Patient',
          identifier: [{ system: 'urn:only', value: other }],
        };
        const response = await as('/Patient', {
          method: 'POST',
          body,
          headers: { 'If-None-Exist': `identifier=urn:only|${other}` },
        });
        expect(response.status).toBe(201);
        expect((await response.json()).id).not.toBe(`only-${other}`);
      });
    });
  });
});

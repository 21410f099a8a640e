/**
 * `_total=accurate` of a search by one token value comes from counts kept as the index is
 * written (migrations/014): after every kind of write — creates, updates that change, keep or
 * remove a value, deletes, transaction Bundles, conditional writes, PATCH, GraphQL mutations —
 * and after the counts are folded, the total is the number of matching resources, each counted
 * once, and every kept count equals the index rows' `count(DISTINCT id)`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGraphQL } from '../support/graphql-post.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type RequestInit, type TestServer } from '../support/test-server.js';
import { tokenCountRows, tokenCountsAndTruth } from '../support/token-count-truth.js';

const LOINC = 'http://loinc.org';
const LOCAL = 'urn:local-codes';

/** An Observation with these codings (`[system, code]`, system null for none). */
const observation = (codings: [string | null, string][], extra: object = {}) => ({
  resourceType: 'Observation',
  status: 'final',
  code:
    codings.length === 0
      ? { text: 'no coding' }
      : {
          coding: codings.map(([system, code]) => (system === null ? { code } : { system, code })),
        },
  ...extra,
});

describe.each(await availableEngines())('kept token counts on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  const ok = async (path: string, init: RequestInit = {}) => {
    const response = await server.fhir(path, init);
    if (response.status >= 300)
      throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? undefined : response.json();
  };
  const create = async (resource: object): Promise<string> =>
    (await ok('/Observation', { method: 'POST', body: resource })).id;
  /** The totals of `code=` each of `values` (`system|code`, `|code`, `code`). */
  const totals = async (values: string[], token?: string) =>
    Promise.all(
      values.map(async (value) => {
        const query = `/Observation?code=${encodeURIComponent(value)}&_total=accurate&_count=0`;
        return (await ok(query, token === undefined ? {} : { token })).total as number;
      }),
    );
  const expectExact = async () => {
    const { kept, counted } = await tokenCountsAndTruth(server.db);
    expect(kept).toEqual(counted);
  };

  it('counts creates, in each system, with no system, and in any system', async () => {
    await create(observation([[LOINC, 'c1']]));
    await create(observation([[LOINC, 'c1']]));
    await create(observation([[null, 'c1']]));
    await create(observation([[LOCAL, 'c1']]));
    expect(await totals([`${LOINC}|c1`, '|c1', `${LOCAL}|c1`, 'c1', 'other|c1'])).toEqual([
      2, 1, 1, 4, 0,
    ]);
    await expectExact();
  });

  it('counts a resource once with a value twice in one system, and once in any system with it in two', async () => {
    await create(
      observation([
        [LOINC, 'c2'],
        [LOINC, 'c2'],
        [LOCAL, 'c2'],
        [null, 'c2'],
      ]),
    );
    await create(observation([[LOINC, 'c2']]));
    expect(await totals([`${LOINC}|c2`, `${LOCAL}|c2`, '|c2', 'c2'])).toEqual([2, 1, 1, 2]);
    await expectExact();
  });

  it('follows updates that change, keep and remove a value, and deletes', async () => {
    const changed = await create(observation([[LOINC, 'c3']]));
    const kept = await create(
      observation([
        [LOINC, 'c3'],
        [LOCAL, 'c3'],
      ]),
    );
    const removed = await create(observation([[LOINC, 'c3']]));
    const deleted = await create(observation([[LOINC, 'c3']]));
    const put = (id: string, codings: [string | null, string][]) =>
      ok(`/Observation/${id}`, { method: 'PUT', body: { ...observation(codings), id } });
    await put(changed, [[LOINC, 'c3-new']]);
    await put(kept, [
      [LOINC, 'c3'],
      [LOCAL, 'c3'],
    ]);
    await put(removed, []);
    await ok(`/Observation/${deleted}`, { method: 'DELETE' });
    expect(await totals([`${LOINC}|c3`, `${LOCAL}|c3`, 'c3', `${LOINC}|c3-new`])).toEqual([
      1, 1, 1, 1,
    ]);
    // Deleted again, and re-created by a PUT: counted once more.
    await ok(`/Observation/${deleted}`, { method: 'DELETE' });
    await put(deleted, [[LOINC, 'c3']]);
    expect(await totals([`${LOINC}|c3`, 'c3'])).toEqual([2, 2]);
    await expectExact();
  });

  it('adds up a transaction Bundle whose resources share values, with updates and deletes in it', async () => {
    const old = await create(observation([[LOINC, 'c4']]));
    const gone = await create(observation([[LOINC, 'c4']]));
    const entries = [
      ...Array.from({ length: 5 }, (_, i) => ({
        resource: observation([
          [LOINC, 'c4'],
          [LOCAL, i % 2 === 0 ? 'c4' : 'c4-odd'],
        ]),
        request: { method: 'POST', url: 'Observation' },
      })),
      {
        resource: { ...observation([[LOCAL, 'c4']]), id: old },
        request: { method: 'PUT', url: `Observation/${old}` },
      },
      { request: { method: 'DELETE', url: `Observation/${gone}` } },
    ];
    await ok('/', {
      method: 'POST',
      body: { resourceType: 'Bundle', type: 'transaction', entry: entries },
    });
    expect(await totals([`${LOINC}|c4`, `${LOCAL}|c4`, 'c4', `${LOCAL}|c4-odd`])).toEqual([
      5, 4, 6, 2,
    ]);
    await expectExact();
  });

  it('follows conditional creates, updates and deletes', async () => {
    const identified = (value: string, codings: [string | null, string][]) =>
      observation(codings, { identifier: [{ system: 'urn:obs', value }] });
    const conditional = { 'If-None-Exist': 'identifier=urn:obs|c5-a' };
    for (let i = 0; i < 2; i++)
      await ok('/Observation', {
        method: 'POST',
        body: identified('c5-a', [[LOINC, 'c5']]),
        headers: conditional,
      });
    await ok('/Observation?identifier=urn:obs|c5-b', {
      method: 'PUT',
      body: identified('c5-b', [[LOINC, 'c5']]),
    });
    await ok('/Observation?identifier=urn:obs|c5-b', {
      method: 'PUT',
      body: identified('c5-b', [[LOCAL, 'c5']]),
    });
    expect(await totals([`${LOINC}|c5`, `${LOCAL}|c5`, 'c5'])).toEqual([1, 1, 2]);
    await ok('/Observation?identifier=urn:obs|c5-a', { method: 'DELETE' });
    expect(await totals([`${LOINC}|c5`, 'c5'])).toEqual([0, 1]);
    await expectExact();
  });

  it('follows PATCH', async () => {
    const id = await create(observation([[LOINC, 'c6']]));
    await ok(`/Observation/${id}`, {
      method: 'PATCH',
      body: JSON.stringify([
        { op: 'add', path: '/code/coding/-', value: { system: LOCAL, code: 'c6' } },
      ]),
      headers: { 'Content-Type': 'application/json-patch+json' },
    });
    expect(await totals([`${LOINC}|c6`, `${LOCAL}|c6`, 'c6'])).toEqual([1, 1, 1]);
    await ok(`/Observation/${id}`, {
      method: 'PATCH',
      body: JSON.stringify([{ op: 'replace', path: '/code/coding/0/code', value: 'c6-other' }]),
      headers: { 'Content-Type': 'application/json-patch+json' },
    });
    expect(await totals([`${LOINC}|c6`, 'c6', 'c6-other'])).toEqual([0, 1, 1]);
    await expectExact();
  });

  it('follows GraphQL mutations, and counts a GraphQL connection the same way', async () => {
    const res = (code: string) => ({
      resourceType: 'Observation',
      status: 'final',
      code: { coding: [{ system: LOINC, code }] },
    });
    const created = await postGraphQL(
      server,
      'mutation ($res: ObservationCreate!) { ObservationCreate(res: $res) { id } }',
      { res: res('c7') },
    );
    const id = created.body.data.ObservationCreate.id as string;
    await postGraphQL(
      server,
      'mutation ($res: ObservationCreate!) { ObservationCreate(res: $res) { id } }',
      { res: res('c7') },
    );
    const count = async () =>
      (await postGraphQL(server, '{ ObservationConnection(code: "c7") { count } }')).body.data
        .ObservationConnection.count;
    expect(await count()).toBe(2);
    await postGraphQL(
      server,
      'mutation ($id: ID!, $res: ObservationUpdate!) { ObservationUpdate(id: $id, res: $res) { id } }',
      { id, res: { ...res('c7-other'), id } },
    );
    expect(await count()).toBe(1);
    await postGraphQL(server, 'mutation ($id: ID!) { ObservationDelete(id: $id) { id } }', { id });
    expect(await totals([`${LOINC}|c7`, 'c7-other'])).toEqual([1, 0]);
    await expectExact();
  });

  it('keeps the totals when the counts are folded, one row per key', async () => {
    const ids = [];
    for (let i = 0; i < 6; i++)
      ids.push(
        await create(
          observation([
            [LOINC, 'c8'],
            [LOCAL, 'c8'],
          ]),
        ),
      );
    await ok(`/Observation/${ids[0]}`, { method: 'DELETE' });
    const { projectId } = server.project;
    const before = await tokenCountRows(server.db, projectId);
    await server.store.tokenCounts.fold(projectId);
    expect(await tokenCountRows(server.db, projectId)).toBeLessThan(before);
    const { rows } = await server.db.query<{ rows: number }>(
      `SELECT count(*)::integer AS rows FROM search_token_count
       WHERE project_id = $1 AND code = 'code' AND value = 'c8' GROUP BY any_system, system`,
      [projectId],
    );
    // LOINC and LOCAL, each folded into one row, and the any-system correction.
    expect(rows).toEqual([{ rows: 1 }, { rows: 1 }, { rows: 1 }]);
    expect(await totals([`${LOINC}|c8`, `${LOCAL}|c8`, 'c8'])).toEqual([5, 5, 5]);
    await create(observation([[LOINC, 'c8']]));
    expect(await totals([`${LOINC}|c8`, 'c8'])).toEqual([6, 6]);
    await expectExact();
  });

  it('counts only what a token sees: its own project, and only the types its scopes allow', async () => {
    await create(observation([[LOINC, 'c9']]));
    const other = await server.createProject('Other');
    for (let i = 0; i < 3; i++)
      await ok('/Observation', {
        method: 'POST',
        body: observation([[LOINC, 'c9']]),
        token: other.token,
      });
    const { clientId, clientSecret } = await (
      await server.call(`/admin/projects/${server.project.projectId}/clients`, {
        method: 'POST',
        body: { name: 'observations only', scope: 'system/Observation.rs' },
        token: await server.rootToken(),
      })
    ).json();
    const scoped = await server.token(clientId, clientSecret);
    expect(await totals([`${LOINC}|c9`, 'c9'], scoped)).toEqual([1, 1]);
    expect(await totals([`${LOINC}|c9`, 'c9'], other.token)).toEqual([3, 3]);
    const refused = await server.fhir('/Patient?gender=female&_total=accurate', { token: scoped });
    expect(refused.status).toBe(403);
    await expectExact();
  });

  it('counts the matches as before for anything but one token value', async () => {
    await create(observation([[LOINC, 'c10']], { status: 'preliminary' }));
    const id = await create(
      observation([
        [LOINC, 'c10'],
        [LOINC, 'c10-b'],
      ]),
    );
    const total = async (query: string) =>
      (await ok(`/Observation?${query}&_total=accurate&_count=0`)).total as number;
    expect(await total('code=c10,c10-b')).toBe(2);
    expect(await total('code=c10&code=c10-b')).toBe(1);
    expect(await total('code=c10&status=preliminary')).toBe(1);
    expect(await total(`code=${LOINC}|c10&_id=${id}`)).toBe(1);
    expect(await total(`_id=${id}`)).toBe(1);
    expect(await total(`code:not=c10-b&code=c10`)).toBe(1);
    expect(await total(`code=${encodeURIComponent(`${LOINC}|`)}`)).toBeGreaterThanOrEqual(2);
  });
});

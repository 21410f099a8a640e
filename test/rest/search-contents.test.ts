/**
 * Searches take the contents of the versions they find from copies kept by version
 * (runtime/store/version-contents.ts), and read only the versions not kept yet. Whatever the
 * copies, a search sees every write acknowledged before it, on both engines and across server
 * processes, and never a version that rolled back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingDatabase } from '../support/counting-database.js';
import { availableEngines, createTestDatabase } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { openDatabase } from '../../runtime/store/open-database.js';

/** The statement that reads versions' contents from history (version-contents.ts). */
const VERSION_READ = /FROM resource_history h\b/;

describe.each(await availableEngines())('search contents on %s', (engine) => {
  let server: TestServer;
  let versionReads = 0;

  beforeAll(async () => {
    const database = await createTestDatabase(engine);
    const db = countingDatabase(database.db, (text) => {
      if (VERSION_READ.test(text)) versionReads++;
    });
    server = await startTestServer(engine, {}, { ...database, db });
  });
  afterAll(() => server?.stop());

  const put = async (id: string, family: string, expected = [200, 201]) => {
    const response = await server.fhir(`/Patient/${id}`, {
      method: 'PUT',
      body: { resourceType: 'Patient', id, name: [{ family }] },
    });
    expect(expected).toContain(response.status);
  };
  const familiesOf = async (server: TestServer, query: string) => {
    const response = await server.fhir(`/Patient?${query}`);
    expect(response.status).toBe(200);
    const bundle = await response.json();
    return (bundle.entry ?? []).map(
      (entry: { resource: { name: { family: string }[] } }) => entry.resource.name[0].family,
    );
  };
  const graphqlFamilies = async (tag: string) => {
    const response = await server.fhir('/$graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: {
        query: `{ PatientList(_id: "${tag}-a,${tag}-b", _sort: "_id") { name { family } } }`,
      },
    });
    const body = await response.json();
    expect(body.errors).toBeUndefined();
    return body.data.PatientList.map((p: { name: { family: string }[] }) => p.name[0].family);
  };

  it('reads the contents of the versions found once, then from memory', async () => {
    await put('contents-a', 'Alpha');
    await put('contents-b', 'Beta');
    versionReads = 0;
    expect(await familiesOf(server, '_id=contents-a,contents-b&_sort=_id')).toEqual([
      'Alpha',
      'Beta',
    ]);
    expect(versionReads).toBe(1);
    for (let i = 0; i < 3; i++) {
      expect(await familiesOf(server, '_id=contents-a,contents-b&_sort=_id')).toEqual([
        'Alpha',
        'Beta',
      ]);
      expect(await graphqlFamilies('contents')).toEqual(['Alpha', 'Beta']);
    }
    expect(versionReads).toBe(1);
  });

  it('finds each new version at once, and reads only that one', async () => {
    await put('update-a', 'One');
    await put('update-b', 'Other');
    expect(await familiesOf(server, '_id=update-a,update-b&_sort=_id')).toEqual(['One', 'Other']);
    versionReads = 0;
    await put('update-a', 'Two');
    expect(await familiesOf(server, '_id=update-a,update-b&_sort=_id')).toEqual(['Two', 'Other']);
    expect(await graphqlFamilies('update')).toEqual(['Two', 'Other']);
    expect(versionReads).toBe(1);
    expect((await server.fhir('/Patient/update-a', { method: 'DELETE' })).status).toBe(200);
    expect(await familiesOf(server, '_id=update-a,update-b&_sort=_id')).toEqual(['Other']);
    await put('update-a', 'Three', [201]);
    expect(await familiesOf(server, '_id=update-a,update-b&_sort=_id')).toEqual(['Three', 'Other']);
  });

  it('never keeps a version a rolled-back transaction wrote and searched', async () => {
    // Inside the transaction, the search finds version 1 of the new Patient; then the last entry
    // fails and everything rolls back. A later create of the same id is version 1 again.
    const response = await server.fhir('/', {
      method: 'POST',
      body: {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            resource: { resourceType: 'Patient', id: 'ghost', name: [{ family: 'Rolled back' }] },
            request: { method: 'PUT', url: 'Patient/ghost' },
          },
          { request: { method: 'GET', url: 'Patient?_id=ghost' } },
          { request: { method: 'GET', url: 'Patient?no-such-parameter=1' } },
        ],
      },
    });
    expect(response.status).toBe(400);
    expect(await familiesOf(server, '_id=ghost')).toEqual([]);
    await put('ghost', 'Committed', [201]);
    expect(await familiesOf(server, '_id=ghost')).toEqual(['Committed']);
  });

  it.runIf(engine === 'postgres')(
    'finds a version another server process wrote, with its own copies of older ones',
    async () => {
      // Behind one public address, as processes sharing a database are: the first's tokens hold.
      const other = await startTestServer(
        engine,
        { GRAPHIR_BASE_URL: server.url },
        {
          ...server.database,
          db: await openDatabase({ url: server.database.url! }),
        },
      );
      try {
        const token = server.project.token;
        const viaOther = (id: string, family: string) =>
          other.fhir(`/Patient/${id}`, {
            method: 'PUT',
            token,
            body: { resourceType: 'Patient', id, name: [{ family }] },
          });
        await put('shared', 'Before');
        expect(await familiesOf(server, '_id=shared')).toEqual(['Before']);
        expect((await viaOther('shared', 'After')).status).toBe(200);
        expect(await familiesOf(server, '_id=shared')).toEqual(['After']);
      } finally {
        await other.close();
      }
    },
  );

  it('never answers with a version older than one acknowledged before the search was sent', async () => {
    await put('race', '0');
    let acknowledged = 0;
    const writer = async () => {
      for (let v = 1; v <= 30; v++) {
        await put('race', String(v));
        acknowledged = v;
      }
    };
    const reader = async () => {
      for (let i = 0; i < 40; i++) {
        const before = acknowledged;
        const [family] = await familiesOf(server, '_id=race');
        expect(Number(family)).toBeGreaterThanOrEqual(before);
      }
    };
    await Promise.all([writer(), reader(), reader(), reader()]);
    expect(await familiesOf(server, '_id=race')).toEqual(['30']);
  });
});

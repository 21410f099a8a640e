/**
 * On PGlite, reads by id come from copies kept in memory (runtime/store/resource-cache.ts); on
 * PostgreSQL they go to the database. Either way a read sees every write acknowledged before it
 * was sent, and never one that rolled back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingDatabase } from '../support/counting-database.js';
import { availableEngines, createTestDatabase } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** The statement that reads current rows by id (runtime/store/current-reads.ts). */
const CURRENT_READ = /r\.content FROM resource r\b/;

describe.each(await availableEngines())('reads by id on %s', (engine) => {
  let server: TestServer;
  let reads = 0;

  beforeAll(async () => {
    const database = await createTestDatabase(engine);
    const db = countingDatabase(database.db, (text) => {
      if (CURRENT_READ.test(text)) reads++;
    });
    server = await startTestServer(engine, {}, { ...database, db });
  });
  afterAll(() => server?.stop());

  const create = async (family: string) => {
    const response = await server.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient', name: [{ family }] },
    });
    expect(response.status).toBe(201);
    return (await response.json()).id as string;
  };
  const familyOf = async (id: string) => {
    const response = await server.fhir(`/Patient/${id}`);
    expect(response.status).toBe(200);
    return (await response.json()).name[0].family as string;
  };
  const put = (id: string, family: string, ifMatch?: string) =>
    server.fhir(`/Patient/${id}`, {
      method: 'PUT',
      body: { resourceType: 'Patient', id, name: [{ family }] },
      ...(ifMatch ? { headers: { 'If-Match': ifMatch } } : {}),
    });

  it(
    engine === 'pglite'
      ? 'reads the database once, then from memory'
      : 'reads the database every time',
    async () => {
      const id = await create('Once');
      reads = 0;
      for (let i = 0; i < 5; i++) expect(await familyOf(id)).toBe('Once');
      expect(reads).toBe(engine === 'pglite' ? 1 : 5);
    },
  );

  it('sees an update, a delete, and a re-creation at once', async () => {
    const id = await create('First');
    expect(await familyOf(id)).toBe('First');
    expect((await put(id, 'Second')).status).toBe(200);
    expect(await familyOf(id)).toBe('Second');
    expect((await server.fhir(`/Patient/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await server.fhir(`/Patient/${id}`)).status).toBe(410);
    expect((await put(id, 'Third')).status).toBe(201);
    expect(await familyOf(id)).toBe('Third');
  });

  it('keeps the committed version when a transaction that updated it rolls back', async () => {
    const id = await create('Kept');
    const other = await create('Other');
    expect(await familyOf(id)).toBe('Kept');
    const response = await server.fhir('/', {
      method: 'POST',
      body: {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            resource: { resourceType: 'Patient', id, name: [{ family: 'Rolled back' }] },
            request: { method: 'PUT', url: `Patient/${id}` },
          },
          {
            resource: { resourceType: 'Patient', id: other, name: [{ family: 'x' }] },
            request: { method: 'PUT', url: `Patient/${other}`, ifMatch: 'W/"9"' },
          },
        ],
      },
    });
    expect(response.status).toBe(412);
    expect(await familyOf(id)).toBe('Kept');
  });

  it('never answers a read with a version older than one acknowledged before it was sent', async () => {
    const id = await create('0');
    let acknowledged = 0;
    const writer = async () => {
      for (let v = 1; v <= 30; v++) {
        expect((await put(id, String(v))).status).toBe(200);
        acknowledged = v;
      }
    };
    const reader = async () => {
      for (let i = 0; i < 60; i++) {
        const before = acknowledged;
        expect(Number(await familyOf(id))).toBeGreaterThanOrEqual(before);
      }
    };
    await Promise.all([writer(), reader(), reader(), reader()]);
    expect(await familyOf(id)).toBe('30');
  });
});

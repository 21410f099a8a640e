/**
 * `$execute` runs the Bot's current version, known before the run starts: whenever a new one is
 * written — through REST, in a transaction Bundle, by another server on the same PostgreSQL
 * database — the next execution runs it, and an outdated version never runs (its `fhir` calls
 * would write). On PGlite the Bot comes from the store's exact cache
 * (runtime/store/resource-cache.ts); on PostgreSQL from the database, every time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countingDatabase } from '../support/counting-database.js';
import { availableEngines, createTestDatabase } from '../support/test-databases.js';
import {
  serversSharingOneDatabase,
  startTestServer,
  type TestServer,
} from '../support/test-server.js';

const engines = await availableEngines();
const version = (v: string) => `export async function handler() { return '${v}'; }`;
/** Statements that read a Bot's row. */
const READS = /r\.content FROM resource r\b/;

/** Runs the Bot with a text body; its status and answer. */
async function executeOn(server: TestServer, id: string) {
  const response = await server.fhir(`/Bot/${id}/$execute`, {
    method: 'POST',
    body: 'x',
    headers: { 'Content-Type': 'text/plain' },
  });
  return { status: response.status, text: await response.text() };
}

describe.each(engines)('Bot/$execute runs the current version, on %s', (engine) => {
  let server: TestServer;
  let reads = 0;

  beforeAll(async () => {
    const database = await createTestDatabase(engine);
    const db = countingDatabase(database.db, (text) => {
      if (READS.test(text)) reads++;
    });
    server = await startTestServer(engine, {}, { ...database, db });
  });
  afterAll(() => server?.stop());

  const createBot = async (code: string) => {
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', code },
    });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string };
  };
  const execute = (id: string) => executeOn(server, id);

  it('reads the Bot before each run: from the cache on PGlite, from the database on PostgreSQL', async () => {
    const { id } = await createBot(version('one'));
    expect(await execute(id)).toEqual({ status: 200, text: 'one' });
    reads = 0;
    for (let i = 0; i < 5; i++) expect((await execute(id)).text).toBe('one');
    expect(reads).toBe(engine === 'pglite' ? 0 : 5);
  });

  it('runs the new version right after an update, and answers 410 right after a delete', async () => {
    const bot = await createBot(version('before'));
    expect((await execute(bot.id)).text).toBe('before');
    const updated = await server.fhir(`/Bot/${bot.id}`, {
      method: 'PUT',
      body: { resourceType: 'Bot', id: bot.id, code: version('after') },
    });
    expect(updated.status).toBe(200);
    expect((await execute(bot.id)).text).toBe('after');
    expect((await server.fhir(`/Bot/${bot.id}`, { method: 'DELETE' })).status).toBe(200);
    expect((await execute(bot.id)).status).toBe(410);
  });

  it('runs the version a transaction Bundle committed, and keeps the old one when it failed', async () => {
    const bot = await createBot(version('first'));
    expect((await execute(bot.id)).text).toBe('first');
    const bundle = (code: string, extra: object[] = []) =>
      server.fhir('/', {
        method: 'POST',
        body: {
          resourceType: 'Bundle',
          type: 'transaction',
          entry: [
            {
              resource: { resourceType: 'Bot', id: bot.id, code },
              request: { method: 'PUT', url: `Bot/${bot.id}` },
            },
            ...extra,
          ],
        },
      });
    // The other Bot's If-Match fails while both are written: the transaction rolls back.
    const other = await createBot(version('other'));
    const failed = await bundle(version('rolled back'), [
      {
        resource: { resourceType: 'Bot', id: other.id, code: version('x') },
        request: { method: 'PUT', url: `Bot/${other.id}`, ifMatch: 'W/"7"' },
      },
    ]);
    expect(failed.status).toBe(412);
    expect((await execute(bot.id)).text).toBe('first');
    expect((await bundle(version('second'))).status).toBe(200);
    expect((await execute(bot.id)).text).toBe('second');
  });

  it('runs many executions of a Bot being updated, each with a version that was current', async () => {
    const bot = await createBot(version('0'));
    const seen = new Set<string>();
    let written = 0;
    const writer = async () => {
      for (let v = 1; v <= 10; v++) {
        const response = await server.fhir(`/Bot/${bot.id}`, {
          method: 'PUT',
          body: { resourceType: 'Bot', id: bot.id, code: version(String(v)) },
        });
        expect(response.status).toBe(200);
        written = v;
      }
    };
    const runner = async () => {
      for (let i = 0; i < 20; i++) {
        const before = written;
        const { status, text } = await execute(bot.id);
        expect(status).toBe(200);
        // Never older than what was written before this execution was asked for.
        expect(Number(text)).toBeGreaterThanOrEqual(before);
        seen.add(text);
      }
    };
    await Promise.all([writer(), runner(), runner()]);
    expect((await execute(bot.id)).text).toBe('10');
  });
});

describe.runIf(engines.includes('postgres'))(
  'Bot/$execute on two servers sharing one PostgreSQL database',
  () => {
    const servers = serversSharingOneDatabase();

    const executeOnFirst = (id: string) => executeOn(servers.first, id);
    /** A Bot made on the first server and run there once. */
    const createAndRunOnFirst = async (code: string) => {
      const created = await servers.first.fhir('/Bot', {
        method: 'POST',
        body: { resourceType: 'Bot', code },
      });
      const { id } = await created.json();
      expect((await executeOnFirst(id)).status).toBe(200);
      return id as string;
    };
    const updateOnSecond = async (id: string, code: string) => {
      const updated = await servers.second.fhir(`/Bot/${id}`, {
        method: 'PUT',
        body: { resourceType: 'Bot', id, code },
      });
      expect(updated.status).toBe(200);
    };

    it('runs a version the other server wrote the moment it is written', async () => {
      const id = await createAndRunOnFirst(version('v1'));
      await updateOnSecond(id, version('v2'));
      expect((await executeOnFirst(id)).text).toBe('v2');
      expect((await servers.second.fhir(`/Bot/${id}`, { method: 'DELETE' })).status).toBe(200);
      expect((await executeOnFirst(id)).status).toBe(410);
    });

    it('never runs an outdated version, whose fhir calls would write', async () => {
      const writes = (tag: string) =>
        `export async function handler(fhir) {
          await fhir.createResource({ resourceType: 'Basic', code: { text: '${tag}' } });
          return '${tag}';
        }`;
      const id = await createAndRunOnFirst(writes('old-copy'));
      await updateOnSecond(id, writes('current'));
      expect((await executeOnFirst(id)).text).toBe('current');
      const basics = await (await servers.first.fhir('/Basic?_count=100')).json();
      const tags = (basics.entry ?? []).map(
        (entry: { resource: { code: { text: string } } }) => entry.resource.code.text,
      );
      // One from the first execution; the second ran the current version only.
      expect(tags.sort()).toEqual(['current', 'old-copy']);
    });
  },
);

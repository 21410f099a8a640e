/**
 * Graphir behind PgBouncer in transaction pooling mode (docs/scale-out.md): two server processes
 * whose requests, and migrations, go through a PgBouncer the test starts (DATABASE_URL), while
 * what needs a session of its own — LISTEN for notices, the job queue and its liveness
 * connection — connects directly (DATABASE_DIRECT_URL). Every statement shape runs more often than
 * it takes to be kept prepared were it allowed: through the pooler none may be, or another
 * session answers `prepared statement "graphir_…" does not exist`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBot, executeLater, taskResult, waitForTask } from '../jobs/async-helpers.js';
import {
  createProject,
  startServerProcess,
  type ServerProcess,
} from '../reliability/server-process.js';
import { pgbouncerBinary, startPgbouncer, type Pgbouncer } from '../support/pgbouncer.js';
import { postgresUrl } from '../support/postgres-admin.js';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';
import type { FhirResponse } from '../support/test-server.js';

const engines = await availableEngines();
const binary = pgbouncerBinary();
/** More runs than a recurring statement needs to be prepared (statement-names.ts: 3). */
const RUNS = 6;

if (engines.includes('postgres') && !binary) {
  console.warn('Skipping the PgBouncer tests: no pgbouncer binary (apt-get install pgbouncer).');
}

describe.runIf(engines.includes('postgres') && binary)(
  'two processes behind PgBouncer in transaction mode',
  () => {
    let bouncer: Pgbouncer;
    let database: TestDatabase;
    let server: ServerProcess;
    let fhir: (
      path: string,
      init?: { method?: string; body?: unknown; headers?: Record<string, string> },
    ) => Promise<FhirResponse>;
    const databaseName = () => new URL(database.url!).pathname.slice(1);

    beforeAll(async () => {
      bouncer = await startPgbouncer(binary!, (await postgresUrl())!);
      // Not migrated: the server's migrations run through PgBouncer too.
      database = await createTestDatabase('postgres', { migrated: false });
      server = await startServerProcess({
        DATABASE_URL: bouncer.through(database.url!),
        DATABASE_DIRECT_URL: database.url!,
        GRAPHIR_PROCESSES: '2',
      });
      const { token } = await createProject(server.url, 'Pooled');
      fhir = (path, init = {}) =>
        fetch(`${server.url}/fhir/R4${path}`, {
          method: init.method ?? 'GET',
          headers: {
            Authorization: `Bearer ${token}`,
            'Content-Type': 'application/fhir+json',
            ...init.headers,
          },
          body:
            init.body === undefined || typeof init.body === 'string'
              ? (init.body as string | undefined)
              : JSON.stringify(init.body),
        }) as Promise<FhirResponse>;
    }, 120_000);

    afterAll(async () => {
      await server?.kill('SIGTERM');
      await database?.drop();
      await bouncer?.stop();
    });

    it('creates, reads, updates, searches and deletes', async () => {
      const ids: string[] = [];
      for (let i = 0; i < RUNS; i++) {
        const created = await fhir('/Patient', {
          method: 'POST',
          body: { resourceType: 'Patient', name: [{ family: `Pooled${i}` }], gender: 'female' },
        });
        expect(created.status).toBe(201);
        ids.push((await created.json()).id);
      }
      for (const id of ids) {
        expect((await fhir(`/Patient/${id}`)).status).toBe(200);
        const updated = await fhir(`/Patient/${id}`, {
          method: 'PUT',
          body: { resourceType: 'Patient', id, name: [{ family: 'Pooled' }], gender: 'male' },
        });
        expect(updated.status).toBe(200);
      }
      for (let i = 0; i < RUNS; i++) {
        const found = await (await fhir('/Patient?name=pooled&gender=male&_total=accurate')).json();
        expect(found.total).toBe(RUNS);
      }
      expect((await fhir(`/Patient/${ids[0]}`, { method: 'DELETE' })).status).toBe(200);
      expect((await fhir(`/Patient/${ids[0]}`)).status).toBe(410);
    });

    it('answers GraphQL', async () => {
      for (let i = 0; i < RUNS; i++) {
        const response = await fhir('/$graphql', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: { query: '{ PatientList(gender: "male", _count: 100) { id name { family } } }' },
        });
        const { data, errors } = await response.json();
        expect(errors).toBeUndefined();
        expect(data.PatientList).toHaveLength(RUNS - 1);
      }
    });

    it('runs a bot, and a bot as a respond-async job', async () => {
      const botId = await createBot(
        { fhir },
        `export async function handler(fhir, event) {
          const found = await fhir.search('Patient', { name: 'pooled' });
          return { got: event.input, patients: found.entry.length };
        }`,
      );
      for (let i = 0; i < RUNS; i++) {
        const response = await fhir(`/Bot/${botId}/$execute`, { method: 'POST', body: { i } });
        expect(await response.json()).toEqual({ got: { i }, patients: RUNS - 1 });
      }
      const task = await waitForTask(
        { fhir },
        await executeLater({ fhir }, botId, { later: true }),
      );
      expect(task.status).toBe('completed');
      expect(taskResult(task).body).toEqual({ got: { later: true }, patients: RUNS - 1 });
    });

    it('sent its statements through PgBouncer', async () => {
      // At least the writes and searches above, each a transaction of its own.
      expect(await bouncer.transactions(databaseName())).toBeGreaterThan(RUNS * 4);
    });
  },
);

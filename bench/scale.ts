/**
 * npm run bench:scale — issue 31's data-scale bench. A server as `npm start` runs it, on a fresh
 * PostgreSQL database, with 25 projects (one big, 24 small of varied size, scale-dataset.ts),
 * loaded step by step over HTTP in transaction Bundles, several in flight (scale-load.ts). At each
 * step (SCALE_STEPS, resources in all projects; default 10,000, 100,000 and 1,000,000) it prints
 * the load rate, the database's size per resource and its largest tables, the Q-suite's p50 and
 * p99 at concurrency 1 on the big project (scale-queries.ts), and the server's RSS (VmRSS) and V8
 * heap, before and after a full garbage collection.
 * SCALE_REQUESTS sets the timed requests per query (200); SCALE_KEEP=1 keeps the database and
 * prints its URL, to read plans with EXPLAIN ANALYZE afterwards; SCALE_DATABASE_URL=<that URL>
 * runs the Q-suite again on it without loading (after a migration, say: the server migrates it).
 * SCALE_MIXED_SECONDS=600 then sends mixed load for that long (scale-mixed.ts), with the server's
 * memory every minute.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../test/support/test-databases.js';
import { ROOT, buildOnce, clientToken, projectToken } from './bench-server.js';
import { measure } from './measure.js';
import { BIG_PROJECT, BUNDLE_ENTRIES, SMALL_PROJECTS } from './scale-dataset.js';
import { IN_FLIGHT, loadResources, type LoadTarget } from './scale-load.js';
import { mixedLoad } from './scale-mixed.js';
import { SCALE_QUERIES, type ScaleIds, type ScaleRequest } from './scale-queries.js';
import { collectGarbage, residentBytes, serverMemory, spawnServer } from './server-processes.js';
import type { Database } from '../runtime/store/database.js';
import { openDatabase } from '../runtime/store/open-database.js';

const STEPS = (process.env.SCALE_STEPS ?? '10000,100000,1000000').split(',').map(Number);
const REQUESTS = Number(process.env.SCALE_REQUESTS ?? 200);
const KEEP = process.env.SCALE_KEEP === '1';
const PROJECT_NAME = 'Scale';

const megabytes = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;

const REUSED_URL = process.env.SCALE_DATABASE_URL;
const MIXED_SECONDS = Number(process.env.SCALE_MIXED_SECONDS ?? 0);

buildOnce();
const dir = mkdtempSync(join(tmpdir(), 'graphir-scale-'));
const database = REUSED_URL
  ? { db: await openDatabase({ url: REUSED_URL }), url: REUSED_URL }
  : await createTestDatabase('postgres');
const server = await spawnServer(
  'dist',
  {
    GRAPHIR_ROOT_CLIENT_ID: ROOT.id,
    GRAPHIR_ROOT_CLIENT_SECRET: ROOT.secret,
    GRAPHIR_TOKEN_LIFETIME_SECONDS: '86400',
    DATABASE_URL: database.url!,
    LOG_LEVEL: 'warn',
  },
  join(dir, 'server.log'),
  { gc: true },
);
try {
  const root = await clientToken(server.url, ROOT.id, ROOT.secret);
  console.log(`bench:scale: server RSS at start ${megabytes(residentBytes(server.pid))}`);
  if (REUSED_URL) {
    const target: LoadTarget = { url: server.url, tokens: [await bigProjectToken(root)] };
    const { rows } = await database.db.query<{ count: number }>(
      'SELECT count(*)::integer AS count FROM resource',
    );
    console.log(`\n${rows[0].count.toLocaleString('en')} resources, loaded before`);
    await runQSuite(target);
    await runMixedLoad(target);
  } else {
    await runMixedLoad(await loadAndMeasure(root));
  }
  if (KEEP && !REUSED_URL) console.log(`\nThe database is kept: ${database.url}`);
} finally {
  await server.stop();
  if (KEEP || !('drop' in database)) await database.db.close();
  else await database.drop();
  rmSync(dir, { recursive: true, force: true });
}

/** Loads the steps one after the other; after each, its figures and the Q-suite's. */
async function loadAndMeasure(root: string): Promise<LoadTarget> {
  const tokens: string[] = [];
  for (let project = 0; project <= SMALL_PROJECTS; project++)
    tokens.push(await projectToken(server.url, root, `${PROJECT_NAME} ${project}`));
  const target: LoadTarget = { url: server.url, tokens };
  console.log(
    `${SMALL_PROJECTS + 1} projects, Bundles of ${BUNDLE_ENTRIES} entries, ${IN_FLIGHT} in flight`,
  );
  const next = { patient: 0 };
  let loaded = 0;
  for (const step of STEPS) {
    const started = performance.now();
    const sent = await loadResources(target, step - loaded, next);
    const seconds = (performance.now() - started) / 1000;
    loaded += sent;
    const analyzeStarted = performance.now();
    // Planner statistics up to date before any query is timed, not left to the server's timer.
    await database.db.query('ANALYZE');
    const analyzeSeconds = (performance.now() - analyzeStarted) / 1000;
    const size = await databaseSize(database.db);
    console.log(
      `\n${loaded.toLocaleString('en')} resources (${next.patient.toLocaleString('en')} patients): loaded at ${(sent / seconds).toFixed(0)} resources/s (${seconds.toFixed(0)} s); ANALYZE ${analyzeSeconds.toFixed(1)} s; database ${megabytes(size.total)}, ${(size.total / loaded / 1024).toFixed(1)} KB per resource; largest tables with their indexes: ${size.largest}`,
    );
    await runQSuite(target);
  }
  return target;
}

async function runMixedLoad(target: LoadTarget): Promise<void> {
  if (MIXED_SECONDS <= 0) return;
  console.log(`\nMixed load for ${MIXED_SECONDS} s (scale-mixed.ts):`);
  await mixedLoad({
    target,
    ids: await scaleIds(target),
    seconds: MIXED_SECONDS,
    send: (request) => send(target, request),
    report: async (elapsed, requests) => {
      const memory = await serverMemory(server);
      console.log(
        `  ${elapsed.toFixed(0).padStart(4)} s: ${requests} requests (${(requests / elapsed).toFixed(0)}/s); server RSS ${megabytes(memory.rss)}, V8 heap ${megabytes(memory.heapUsed ?? 0)} used of ${megabytes(memory.heapTotal ?? 0)}`,
      );
    },
  });
  await collectGarbage(server);
  const live = await serverMemory(server);
  console.log(
    `  after a full garbage collection: RSS ${megabytes(live.rss)}, heap ${megabytes(live.heapUsed ?? 0)} used`,
  );
}

async function runQSuite(target: LoadTarget): Promise<void> {
  const ids = await scaleIds(target);
  for (const [name, query] of Object.entries(SCALE_QUERIES)) {
    let i = 0;
    const figures = await measure(REQUESTS, 1, () => send(target, query(ids, i++)));
    console.log(
      `  ${name.padEnd(64)} p50 ${figures.p50.toFixed(2).padStart(7)} ms  p99 ${figures.p99.toFixed(2).padStart(7)} ms`,
    );
  }
  const memory = await serverMemory(server);
  // What stays live, beside what the process holds: a full collection first.
  await collectGarbage(server);
  const live = await serverMemory(server);
  console.log(
    `  server after the Q-suite: RSS ${megabytes(memory.rss)}, V8 heap ${megabytes(memory.heapUsed ?? 0)} used of ${megabytes(memory.heapTotal ?? 0)}; after a full garbage collection RSS ${megabytes(live.rss)}, heap ${megabytes(live.heapUsed ?? 0)} used`,
  );
}

/** On a database loaded before, a token of a new client of its big project. */
async function bigProjectToken(root: string): Promise<string> {
  const { rows } = await database.db.query<{ id: string }>(
    'SELECT id FROM project WHERE name = $1',
    [`${PROJECT_NAME} ${BIG_PROJECT}`],
  );
  if (rows.length === 0) throw new Error(`${REUSED_URL} holds no data set of bench:scale`);
  const response = await fetch(`${server.url}/admin/projects/${rows[0].id}/clients`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${root}` },
    body: JSON.stringify({ name: 'bench:scale' }),
  });
  if (response.status !== 201) throw new Error(`${response.status}: ${await response.text()}`);
  const { clientId, clientSecret } = (await response.json()) as {
    clientId: string;
    clientSecret: string;
  };
  return clientToken(server.url, clientId, clientSecret);
}

async function databaseSize(db: Database): Promise<{ total: number; largest: string }> {
  const total = await db.query<{ bytes: string }>(
    'SELECT pg_database_size(current_database()) AS bytes',
  );
  const tables = await db.query<{ name: string; bytes: string }>(
    `SELECT relname AS name, pg_total_relation_size(oid) AS bytes FROM pg_class
     WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace ORDER BY 2 DESC LIMIT 5`,
  );
  return {
    total: Number(total.rows[0].bytes),
    largest: tables.rows.map((row) => `${row.name} ${megabytes(Number(row.bytes))}`).join(', '),
  };
}

/** A thousand of the big project's Patient ids. */
async function scaleIds(target: LoadTarget): Promise<ScaleIds> {
  const response = await fetch(
    `${target.url}/fhir/R4/Patient?_count=1000&_elements=id&_total=none`,
    {
      headers: { Authorization: `Bearer ${target.tokens[BIG_PROJECT]}` },
    },
  );
  const bundle = (await response.json()) as { entry: { resource: { id: string } }[] };
  return { patients: bundle.entry.map((e) => e.resource.id) };
}

/** One request of the Q-suite to the big project; an error answer, or GraphQL errors, throw. */
async function send(target: LoadTarget, request: ScaleRequest): Promise<void> {
  const headers = { Authorization: `Bearer ${target.tokens[BIG_PROJECT]}` };
  const response =
    'graphql' in request
      ? await fetch(`${target.url}/fhir/R4/$graphql`, {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: request.graphql, variables: request.variables }),
        })
      : await fetch(`${target.url}/fhir/R4${request.rest}`, { headers });
  const text = await response.text();
  if (!response.ok || ('graphql' in request && text.includes('"errors"')))
    throw new Error(`${JSON.stringify(request)} → ${response.status}: ${text.slice(0, 500)}`);
}

/**
 * npm run bench:load — mixed traffic from many concurrent clients for a fixed time: REST creates,
 * conditional updates and transaction Bundles, reads and searches, GraphQL Q1–Q8, and bot
 * executions (an echo bot and one reading a Patient through `fhir`). Against one server process
 * on PGlite, then two processes sharing one fresh PostgreSQL database with the load split between
 * them. The servers run as `npm start` runs them (`node dist/runtime/main.js`, built first); this
 * process only sends requests. Prints per kind of request and overall: count, requests/s, p50,
 * p99 and errors; and each server's memory after seeding and warm-up, at its peak and at the end,
 * against a stated bound. Exits 1 on any error or a broken bound.
 *
 *   npm run bench:load -- --seconds 60 --concurrency 64 --patients 200 --config both
 *
 * Flags (or BENCH_SECONDS, BENCH_CONCURRENCY, BENCH_PATIENTS): `--config pglite|postgres|both`,
 * `--server dist|tsx` (tsx: from the sources, no build), `--no-build` (use dist/ as it is),
 * `--gc` (servers run with --expose-gc and collect garbage before each memory reading, so that
 * the heap figures show what is live; not how production runs).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { availableEngines, createTestDatabase } from '../test/support/test-databases.js';
import { QUERIES, pick, type Ids } from './graphql-query-set.js';
import { clientToken } from './bench-server.js';
import { percentile } from './measure.js';
import {
  loggedErrors,
  collectGarbage,
  residentBytes,
  serverErrorCount,
  serverMemory,
  spawnServer,
  type ServerMemory,
  type ServerMode,
  type ServerProcess,
} from './server-processes.js';
import { patientEntries, random, transactionBundles } from './synthetic-dataset.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: process.env.BENCH_SECONDS ?? '60' },
    concurrency: { type: 'string', default: process.env.BENCH_CONCURRENCY ?? '64' },
    patients: { type: 'string', default: process.env.BENCH_PATIENTS ?? '200' },
    config: { type: 'string', default: 'both' },
    server: { type: 'string', default: 'dist' },
    'no-build': { type: 'boolean', default: false },
    gc: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(flags.seconds);
const CONCURRENCY = Number(flags.concurrency);
const PATIENTS = Number(flags.patients);
const MODE = flags.server as ServerMode;
/** Warm-up at full concurrency before the start figures: cold paths, JIT, pools, bot workers. */
const WARM_UP_SECONDS = Math.min(10, Math.max(2, Math.round(SECONDS / 6)));
const REQUEST_TIMEOUT_MS = 30_000;
/** How long to let queued work (AuditEvents, statistics) finish before a memory reading. */
const QUIET_MS = 3_000;
const ROOT = { id: 'load-root', secret: 'load-root-secret' };
const MB = 1024 * 1024;
/**
 * The memory bound: each server's RSS at the end is at most 1.25× its RSS after seeding and
 * warm-up, plus 150 MB. V8 lets the heap grow to a few times what is live (about 55 MB here)
 * before a full collection, so a reading can catch up to ~160 MB of garbage, and freed memory is
 * not all given back to the system: growth over four 60 s runs was 13–122 MB. That bound catches
 * only gross leaks; `--gc` catches small ones: after a full collection the live heap may grow by
 * at most 32 MB (it grew 0–2 MB), which a leak of 5 KB per request breaks.
 */
const BOUND = { factor: 1.25, slackBytes: 150 * MB, liveHeapBytes: 32 * MB };

interface Sample {
  ms: number;
  error?: string;
}

async function runConfig(config: 'pglite' | 'postgres'): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'graphir-load-'));
  const database = config === 'postgres' ? await createTestDatabase('postgres') : undefined;
  const servers: ServerProcess[] = [];
  let ok = false;
  try {
    const env = {
      GRAPHIR_ROOT_CLIENT_ID: ROOT.id,
      GRAPHIR_ROOT_CLIENT_SECRET: ROOT.secret,
      ...(database ? { DATABASE_URL: database.url! } : { DATA_DIR: join(dir, 'data') }),
    };
    // One public address, as a load balancer gives processes sharing a database: the first's URL
    // is the others' GRAPHIR_BASE_URL, so each accepts the others' tokens (their audience).
    for (let i = 0; i < (database ? 2 : 1); i++) {
      const address: Record<string, string> = i === 0 ? {} : { GRAPHIR_BASE_URL: servers[0].url };
      servers.push(
        await spawnServer(MODE, { ...env, ...address }, join(dir, `server-${i}.log`), {
          gc: flags.gc,
        }),
      );
    }
    const target = await seed(servers);
    console.log(
      `\n== ${config}: ${servers.length} server process${servers.length > 1 ? 'es' : ''} (${MODE === 'dist' ? 'node dist/runtime/main.js' : 'node --import tsx runtime/main.ts'}), ` +
        `${CONCURRENCY} concurrent clients for ${SECONDS} s after ${WARM_UP_SECONDS} s of warm-up, ${PATIENTS} patients seeded ==`,
    );

    const warmUp = await drive(target, WARM_UP_SECONDS);
    await quiet(servers);
    const start = await Promise.all(servers.map(serverMemory));
    const peak = servers.map((s) => residentBytes(s.pid));
    const sampler = setInterval(() => {
      servers.forEach((s, i) => (peak[i] = Math.max(peak[i], residentBytes(s.pid))));
    }, 1000);
    const started = performance.now();
    const samples = await drive(target, SECONDS);
    const elapsed = (performance.now() - started) / 1000;
    clearInterval(sampler);
    await quiet(servers);
    const end = await Promise.all(servers.map(serverMemory));

    const errors = report(samples, elapsed) + countErrors(warmUp, 'warm-up');
    const memoryOk = reportMemory(servers, start, peak, end);
    const serverErrors = (await Promise.all(servers.map(serverErrorCount))).reduce((a, b) => a + b);
    const logged = servers.flatMap(loggedErrors);
    console.log(
      `server-side 5xx by /metrics: ${serverErrors}; error lines in the logs: ${logged.length}`,
    );
    for (const line of logged.slice(0, 5)) console.log(`  ${line.slice(0, 600)}`);
    ok = errors === 0 && serverErrors === 0 && logged.length === 0 && memoryOk;
    console.log(`${config}: ${ok ? 'PASS' : 'FAIL'}`);
    if (!ok) console.log(`logs kept in ${dir}`);
    return !ok;
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await database?.drop();
    // On failure the logs stay for a look; the database goes either way.
    rmSync(ok ? dir : join(dir, 'data'), { recursive: true, force: true });
  }
}

/** Lets queued work finish before a memory reading; with `--gc`, collects garbage too. */
async function quiet(servers: ServerProcess[]): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  if (flags.gc) await Promise.all(servers.map(collectGarbage));
}

/** What the clients need: where to send requests, a token, the seeded ids and the bots. */
interface Target {
  readonly bases: string[];
  readonly headers: Record<string, string>;
  readonly ids: Ids;
  readonly echoBot: string;
  readonly readerBot: string;
  /** One Patient per client, which only that client updates (so If-Match never races). */
  readonly own: { id: string; version: string }[];
}

async function seed(servers: ServerProcess[]): Promise<Target> {
  const [first] = servers;
  const root = await clientToken(first.url, ROOT.id, ROOT.secret);
  const project = await expectOk(
    await fetch(`${first.url}/admin/projects`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${root}` },
      body: JSON.stringify({ name: 'Load' }),
    }),
  );
  const { clientId, clientSecret } = JSON.parse(project);
  const headers = {
    'Content-Type': 'application/fhir+json',
    Authorization: `Bearer ${await clientToken(first.url, clientId, clientSecret)}`,
  };
  const base = `${first.url}/fhir/R4`;
  const post = async (path: string, body: unknown) =>
    JSON.parse(
      await expectOk(
        await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) }),
      ),
    );
  for (const bundle of transactionBundles(PATIENTS, 500)) await post('', bundle);
  const ids = async (type: string) =>
    JSON.parse(
      await expectOk(
        await fetch(`${base}/${type}?_count=1000&_elements=id&_total=none`, { headers }),
      ),
    ).entry.map((e: { resource: { id: string } }) => e.resource.id);
  const bot = async (name: string, code: string) =>
    (await post('/Bot', { resourceType: 'Bot', name, code })).id as string;
  const own = [];
  for (let i = 0; i < CONCURRENCY; i++) {
    const created = await post('/Patient', { resourceType: 'Patient', active: true });
    own.push({ id: created.id as string, version: created.meta.versionId as string });
  }
  return {
    bases: servers.map((s) => `${s.url}/fhir/R4`),
    headers,
    ids: { patients: await ids('Patient'), reports: await ids('DiagnosticReport') },
    echoBot: await bot(
      'echo',
      'export async function handler(fhir, event) { return event.input; }',
    ),
    readerBot: await bot(
      'reader',
      'export async function handler(fhir, event) { const p = await fhir.readResource("Patient", event.input.id); return { id: p.id, birthDate: p.birthDate }; }',
    ),
    own,
  };
}

/** One request of a kind by client `c`, its `n`th: resolves when it succeeded, throws otherwise. */
type Request = (target: Target, c: number, n: number) => Promise<unknown>;

const SEARCHES: Record<string, (n: number) => string> = {
  'search Patient?name': (n) => `Patient?name=${['smi', 'garc', 'mül', 'chal', 'okaf'][n % 5]}`,
  'search Patient?address-city&gender': (n) =>
    `Patient?address-city=${['Boston', 'Austin', 'Denver'][n % 3]}&gender=${n % 2 ? 'male' : 'female'}`,
  'search Patient?identifier': (n) =>
    `Patient?identifier=urn:graphir:bench:mrn|MRN${String(n % PATIENTS).padStart(6, '0')}`,
  'search Patient?birthdate range': (n) =>
    `Patient?birthdate=ge${1940 + (n % 60)}-01-01&birthdate=lt${1945 + (n % 60)}-01-01`,
  'search Observation?code&_count=10': (n) =>
    `Observation?code=http://loinc.org|${['29463-7', '8302-2', '8867-4'][n % 3]}&_count=10&_sort=-date`,
};

let transactionIndex = 1_000_000;

/** The mix: kind → [weight, request]. */
const MIX: Record<string, [number, Request]> = {
  'REST create Patient': [
    8,
    (t, c) =>
      send(t, c, 'POST', '/Patient', {
        resourceType: 'Patient',
        name: [{ family: 'Load', given: [`C${c}`] }],
        gender: c % 2 ? 'male' : 'female',
      }),
  ],
  'REST update Patient (If-Match)': [
    8,
    async (t, c, n) => {
      const own = t.own[c];
      const response = await fetch(`${t.bases[c % t.bases.length]}/Patient/${own.id}`, {
        method: 'PUT',
        headers: { ...t.headers, 'If-Match': `W/"${own.version}"`, Prefer: 'return=minimal' },
        body: JSON.stringify({
          resourceType: 'Patient',
          id: own.id,
          active: n % 2 === 0,
          birthDate: `19${50 + (n % 50)}-01-01`,
        }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      await expectOk(response);
      own.version = /W\/"([^"]+)"/.exec(response.headers.get('ETag') ?? '')![1];
    },
  ],
  'REST transaction (12 entries)': [
    4,
    (t, c) =>
      send(t, c, 'POST', '', {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: patientEntries(transactionIndex++),
      }),
  ],
  'REST read Patient': [6, (t, c, n) => send(t, c, 'GET', `/Patient/${pick(t.ids.patients, n)}`)],
  ...Object.fromEntries(
    Object.entries(SEARCHES).map(([name, query]): [string, [number, Request]] => [
      name,
      [3, (t, c, n) => send(t, c, 'GET', `/${query(n)}`)],
    ]),
  ),
  ...Object.fromEntries(
    Object.entries(QUERIES).map(([name, query]): [string, [number, Request]] => [
      `GraphQL ${name}`,
      [
        4,
        async (t, c, n) => {
          const [text, variables] = query(t.ids, n);
          const body = await send(
            t,
            c,
            'POST',
            '/$graphql',
            { query: text, variables },
            'application/json',
          );
          if (JSON.parse(body).errors) throw new Error(`200 with errors: ${body.slice(0, 500)}`);
        },
      ],
    ]),
  ),
  'bot echo (application/json)': [
    6,
    (t, c, n) => send(t, c, 'POST', `/Bot/${t.echoBot}/$execute`, { hello: n }, 'application/json'),
  ],
  'bot read Patient via fhir': [
    6,
    (t, c, n) =>
      send(
        t,
        c,
        'POST',
        `/Bot/${t.readerBot}/$execute`,
        { id: pick(t.ids.patients, n) },
        'application/json',
      ),
  ],
};
const KINDS = Object.entries(MIX);
const TOTAL_WEIGHT = KINDS.reduce((sum, [, [weight]]) => sum + weight, 0);

async function send(
  t: Target,
  c: number,
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
): Promise<string> {
  const response = await fetch(`${t.bases[c % t.bases.length]}${path}`, {
    method,
    headers: contentType ? { ...t.headers, 'Content-Type': contentType } : t.headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  return expectOk(response);
}

async function expectOk(response: Response): Promise<string> {
  const text = await response.text();
  if (response.status < 200 || response.status > 299)
    throw new Error(`${response.status}: ${text.slice(0, 500)}`);
  return text;
}

/** CONCURRENCY clients, each sending one request after another, kinds drawn by weight. */
async function drive(target: Target, seconds: number): Promise<Map<string, Sample[]>> {
  const samples = new Map(KINDS.map(([kind]) => [kind, [] as Sample[]]));
  const until = performance.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, c) => {
      const next = random(c + 1);
      while (performance.now() < until) {
        let draw = next() * TOTAL_WEIGHT;
        const [kind, [, request]] = KINDS.find(([, [weight]]) => (draw -= weight) < 0)!;
        const t0 = performance.now();
        let error: string | undefined;
        try {
          await request(target, c, n++);
        } catch (e) {
          error = `${kind}: ${(e as Error).message}${(e as Error).cause ? ` (${(e as Error).cause})` : ''}`;
        }
        samples.get(kind)!.push({ ms: performance.now() - t0, ...(error ? { error } : {}) });
      }
    }),
  );
  return samples;
}

/** Prints the table; returns the number of errors. */
function report(samples: Map<string, Sample[]>, seconds: number): number {
  const row = (name: string, list: Sample[]) => {
    const ms = list.map((s) => s.ms);
    const errors = list.filter((s) => s.error).length;
    console.log(
      `${name.padEnd(36)} ${String(list.length).padStart(7)} ${(list.length / seconds).toFixed(1).padStart(8)} ` +
        `${(ms.length ? percentile(ms, 50) : NaN).toFixed(1).padStart(8)} ${(ms.length ? percentile(ms, 99) : NaN).toFixed(1).padStart(8)} ${String(errors).padStart(7)}`,
    );
  };
  console.log(
    `${'kind'.padEnd(36)} ${'count'.padStart(7)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'errors'.padStart(7)}`,
  );
  for (const [kind, list] of samples) row(kind, list);
  const all = [...samples.values()].flat();
  row('all', all);
  return countErrors(samples, 'load');
}

function countErrors(samples: Map<string, Sample[]>, phase: string): number {
  const errors = [...samples.values()].flat().filter((s) => s.error);
  if (errors.length > 0) {
    console.log(`${errors.length} errors during ${phase}; the first ones:`);
    for (const sample of errors.slice(0, 5)) console.log(`  ${sample.error}`);
  }
  return errors.length;
}

/** Prints each server's memory and whether it kept to the bound. */
function reportMemory(
  servers: ServerProcess[],
  start: ServerMemory[],
  peak: number[],
  end: ServerMemory[],
): boolean {
  const mb = (bytes?: number) => (bytes === undefined ? '?' : `${(bytes / MB).toFixed(0)} MB`);
  let ok = true;
  servers.forEach((server, i) => {
    const limit = start[i].rss * BOUND.factor + BOUND.slackBytes;
    const held = end[i].rss <= limit;
    const heapLimit = (start[i].heapUsed ?? 0) + BOUND.liveHeapBytes;
    const heapHeld = !flags.gc || (end[i].heapUsed ?? Infinity) <= heapLimit;
    ok &&= held && heapHeld;
    console.log(
      `server ${i + 1} (pid ${server.pid}): RSS start ${mb(start[i].rss)}, peak ${mb(peak[i])}, end ${mb(end[i].rss)} ` +
        `(/metrics: ${mb(start[i].metricsRss)} → ${mb(end[i].metricsRss)}); ` +
        `heap used${flags.gc ? ' after a full GC' : ''} ${mb(start[i].heapUsed)} → ${mb(end[i].heapUsed)} of ${mb(start[i].heapTotal)} → ${mb(end[i].heapTotal)}, ` +
        `external ${mb(start[i].external)} → ${mb(end[i].external)}`,
    );
    console.log(
      `  bound: end RSS ≤ start RSS × ${BOUND.factor} + ${mb(BOUND.slackBytes)} = ${mb(limit)}: ${held ? 'PASS' : 'FAIL'}`,
    );
    if (flags.gc)
      console.log(
        `  bound: live heap at the end ≤ start + ${mb(BOUND.liveHeapBytes)} = ${mb(heapLimit)}: ${heapHeld ? 'PASS' : 'FAIL'}`,
      );
  });
  return ok;
}

// Last, once every constant above is defined.
if (!(SECONDS > 0 && CONCURRENCY > 0 && PATIENTS > 0))
  throw new Error('bad --seconds/--concurrency/--patients');
if (MODE !== 'dist' && MODE !== 'tsx') throw new Error('--server is dist or tsx');
const configs =
  flags.config === 'both' ? ['pglite', 'postgres'] : [flags.config as 'pglite' | 'postgres'];
if (configs.includes('postgres') && !(await availableEngines()).includes('postgres'))
  throw new Error('No PostgreSQL server answers on 127.0.0.1:5432 (or GRAPHIR_TEST_DATABASE_URL)');
if (MODE === 'dist' && !flags['no-build'])
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });

console.log(
  `Node ${process.version}, ${availableParallelism()} cores, load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} ` + '(a shared machine: other work may run beside the bench)',
);
let failed = false;
for (const config of configs) failed = (await runConfig(config as 'pglite' | 'postgres')) || failed;
process.exit(failed ? 1 : 0);

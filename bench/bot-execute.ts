/**
 * npm run bench:bots — `$execute` over HTTP on PGlite and PostgreSQL, the server running as
 * `npm start` runs it in its own process (bench/bench-server.ts) and the load sent from another
 * (bench/load-client.ts): an echo bot for each content type, an HL7 bot answering buildAck(),
 * a bot reading one Patient through `fhir`, a bot bundling @medplum/core (bench/bots/), and a
 * bot whose `fetch` reads JSON from a loopback server (the floor's, allowed by
 * GRAPHIR_EGRESS_ALLOW); p50, p99 and executions per second at
 * concurrency 1 and 16, the first execution after the bot is saved (cold), and a trivial Koa
 * handler on the same machine (the floor); then the JSON echo at concurrency 1 and the floor in
 * turn, five times, as a multiple of the floor's p50 (the target), with the CPU each execution
 * cost the server's main thread and its other threads (the sandbox workers among them).
 * BENCH_BASELINE_ROOT: another checkout, built; only the JSON echo is measured then, on that
 * version's server and this one's, both running, in turn (see compareWithBaseline).
 */
import { readFileSync } from 'node:fs';
import { availableEngines, type Engine } from '../test/support/test-databases.js';
import { bundleBot } from '../runtime/cli/bot-bundle.js';
import { startBenchServer, type BenchServer } from './bench-server.js';
import { LoadClient, type LoadJob, type LoadRequest } from './load-client.js';
import {
  againstFloor,
  cpuLine,
  measureFloor,
  percentile,
  spread,
  startFloor,
  warmUpFloor,
  type Figures,
} from './measure.js';

/** Timed executions per case and concurrency (see bench/graphql-queries.ts on why so many). */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const HL7 = readFileSync('test/fixtures/hl7/adt-a01.hl7', 'utf8');
/** Rounds of the JSON echo and the floor in turn at concurrency 1, for the target's ratio. */
const FLOOR_ROUNDS = 5;
/** Rounds of each version at each concurrency, in the order baseline, this, this, baseline. */
const BASELINE_ROUNDS = 3;

const ECHO = 'export async function handler(fhir, event) { return event.input; }';
/** The case the target and the baseline comparison are about: name, code, content type, body. */
const JSON_ECHO: [string, string, string, string] = [
  'echo application/json',
  ECHO,
  'application/json',
  '{"a":1,"b":[1,2,3]}',
];

/** Bundled as `graphir bot deploy` bundles it (runtime/cli/bot-bundle.ts). */
const medplumCoreBot = (await bundleBot('bench/bots/medplum-core-bot.ts')).code;

const load = new LoadClient();
const floor = await startFloor();
const baselineRoot = process.env.BENCH_BASELINE_ROOT;
for (const engine of await availableEngines()) {
  if (baselineRoot) {
    await compareWithBaseline(engine, baselineRoot);
    continue;
  }
  const server = await startBenchServer(engine, { GRAPHIR_EGRESS_ALLOW: '127.0.0.1' });
  try {
    await run(engine, server);
  } finally {
    await server.stop();
  }
}
console.log(
  'Medplum, same kind of machine: JSON echo 14.9 ms (119/s at concurrency 16), HL7 ACK 14.7 ms (137 ms cold), in a vm context that is not a sandbox.',
);
floor.close();
load.close();

async function run(engine: string, server: BenchServer): Promise<void> {
  const patient = await (
    await server.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient', gender: 'female' },
    })
  ).json();
  const cases: [string, string, string, string][] = [
    ['echo text/plain', ECHO, 'text/plain', 'hello'],
    JSON_ECHO,
    ['echo form', ECHO, 'application/x-www-form-urlencoded', 'a=1&b=2'],
    [
      'echo application/fhir+json',
      ECHO,
      'application/fhir+json',
      JSON.stringify({ resourceType: 'Patient', active: true }),
    ],
    [
      'echo HL7 v2',
      'export async function handler(fhir, event) { return event.input.toString(); }',
      'x-application/hl7-v2+er7',
      HL7,
    ],
    [
      'HL7 buildAck()',
      'export async function handler(fhir, event) { return event.input.buildAck(); }',
      'x-application/hl7-v2+er7',
      HL7,
    ],
    [
      'read one Patient through fhir',
      'export async function handler(fhir, event) { return fhir.readResource("Patient", event.input.id); }',
      'application/json',
      JSON.stringify({ id: patient.id }),
    ],
    [
      'a bot bundling @medplum/core',
      medplumCoreBot,
      'application/fhir+json',
      JSON.stringify({
        resourceType: 'Patient',
        id: 'p1',
        name: [{ given: ['Ada'], family: 'Lovelace' }],
        birthDate: '1815-12-10',
      }),
    ],
    [
      'fetch JSON from a loopback server',
      'export async function handler(fhir, event) { return (await fetch(event.input.url)).json(); }',
      'application/json',
      JSON.stringify({ url: floor.url }),
    ],
  ];
  // Steady state: every case's code path (V8's code, QuickJS's WebAssembly tiers) warmed before
  // any is timed; without it, the first case measured ran about 1 ms slower than the others.
  for (const [, code, contentType, body] of cases) {
    const id = await createBot(server, code);
    await load.measure({
      url: server.url,
      requests: [executeRequest(server, id, contentType, body)],
      count: REQUESTS,
      concurrency: 4,
    });
  }
  // The floor as warm as the server: as many requests as all the cases had.
  await warmUpFloor(load, floor, REQUESTS * cases.length);
  for (const concurrency of [1, 16]) {
    const base = await measureFloor(
      load,
      floor,
      REQUESTS,
      concurrency,
      `${engine} c=${concurrency}`,
    );
    for (const [name, code, contentType, body] of cases) {
      const id = await createBot(server, code);
      const coldStart = performance.now();
      const cold = await server.fhir(`/Bot/${id}/$execute`, { method: 'POST', body, contentType });
      if (cold.status !== 200) throw new Error(`execute failed: ${cold.status}`);
      await cold.arrayBuffer();
      const coldMs = performance.now() - coldStart;
      const result = await load.measure({
        url: server.url,
        requests: [executeRequest(server, id, contentType, body)],
        count: REQUESTS,
        concurrency,
      });
      console.log(
        `${engine} c=${concurrency} ${name.padEnd(32)} p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms  ${result.rps.toFixed(0)} exec/s  cold ${coldMs.toFixed(1)} ms  (${(result.p50 / base.p50).toFixed(1)}× the floor)`,
      );
    }
  }
  const [jsonEcho, jsonCode, jsonType, jsonBody] = JSON_ECHO;
  const job = {
    url: server.url,
    requests: [executeRequest(server, await createBot(server, jsonCode), jsonType, jsonBody)],
    count: REQUESTS,
    concurrency: 1,
    serverPid: server.pid,
  };
  const ratios = await againstFloor(load, floor, job, FLOOR_ROUNDS);
  console.log(
    `${engine} c=1 ${jsonEcho} and the floor in turn, ${FLOOR_ROUNDS} times: p50 ${spread(ratios.latency, (ratio) => `${ratio.toFixed(1)}×`)} the floor's (target: 3×)`,
  );
  console.log(`${engine} c=1 ${jsonEcho} ${cpuLine(ratios)}`);
}

/**
 * The JSON echo on a baseline's server and this version's, both started at once on the same
 * engine, measured in turn (ABBA, BASELINE_ROUNDS times) at concurrency 1 and 16: the machine's
 * speed drifts within a run, and the order evens it out. Medians of the rounds: p50, executions
 * per second, and the CPU per execution of each server's main thread and other threads.
 */
async function compareWithBaseline(engine: Engine, root: string): Promise<void> {
  const versions = [
    { label: 'baseline', server: await startBenchServer(engine, { LOG_LEVEL: 'silent' }, root) },
    { label: 'this', server: await startBenchServer(engine, { LOG_LEVEL: 'silent' }) },
  ];
  try {
    const [, code, contentType, body] = JSON_ECHO;
    const jobs = new Map<string, Omit<LoadJob, 'warmup' | 'concurrency'>>();
    for (const { label, server } of versions) {
      const job = {
        url: server.url,
        requests: [executeRequest(server, await createBot(server, code), contentType, body)],
        count: REQUESTS,
        serverPid: server.pid,
      };
      await load.measure({ ...job, concurrency: 4 });
      jobs.set(label, job);
    }
    for (const concurrency of [1, 16]) {
      const rounds = new Map<string, Figures[]>(versions.map(({ label }) => [label, []]));
      for (let round = 0; round < BASELINE_ROUNDS; round++) {
        for (const label of ['baseline', 'this', 'this', 'baseline']) {
          rounds.get(label)!.push(await load.measure({ ...jobs.get(label)!, concurrency }));
        }
      }
      for (const [label, figures] of rounds) {
        const median = (values: number[]) => percentile(values, 50);
        console.log(
          `${engine} c=${concurrency} JSON echo, ${label.padEnd(8)} p50 ${median(figures.map((f) => f.p50)).toFixed(2)} ms  ${median(figures.map((f) => f.rps)).toFixed(0)} exec/s  CPU per execution: main thread ${median(figures.map((f) => f.cpu!.main)).toFixed(3)} ms, other threads ${median(figures.map((f) => f.cpu!.others)).toFixed(3)} ms  (medians of ${figures.length} rounds)`,
        );
      }
    }
  } finally {
    for (const { server } of versions) await server.stop();
  }
}

async function createBot(server: BenchServer, code: string): Promise<string> {
  const response = await server.fhir('/Bot', {
    method: 'POST',
    body: { resourceType: 'Bot', code },
  });
  return (await response.json()).id;
}

function executeRequest(
  server: BenchServer,
  id: string,
  contentType: string,
  body: string,
): LoadRequest {
  return {
    method: 'POST',
    path: `/fhir/R4/Bot/${id}/$execute`,
    headers: { 'Content-Type': contentType, Authorization: `Bearer ${server.token}` },
    body,
  };
}

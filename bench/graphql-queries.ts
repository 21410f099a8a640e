/**
 * npm run bench:graphql — the synthetic data set (1,000 patients) loaded over REST, then GraphQL
 * queries Q1–Q8 over HTTP at concurrency 1 and 16, on PGlite and on PostgreSQL, beside a trivial
 * Koa handler on the same machine (the floor). The server runs as `npm start` runs it, in its own
 * process (bench/bench-server.ts); the load comes from another (bench/load-client.ts). Prints
 * p50, p99 and requests per second, then Q1 at concurrency 16 and the floor in turn, five times,
 * as a share of the floor's throughput (the target), with the CPU each request cost the server's
 * threads and the floor's process; and Q1 and Q5 with the id written into the text, a new text for
 * each request, beside the same queries with the id in variables.
 *
 * With `--processes 1,2` (or BENCH_PROCESSES=1,2), instead: Q1 and a REST read at concurrency 16
 * on PostgreSQL, the server run with each number of processes, side by side (process-scaling.ts).
 */
import { availableEngines } from '../test/support/test-databases.js';
import { startBenchServer, type BenchServer } from './bench-server.js';
import { LITERAL_QUERIES, QUERIES, type Ids } from './graphql-query-set.js';
import { LoadClient, type LoadRequest } from './load-client.js';
import { againstFloor, cpuLine, measureFloor, spread, startFloor, warmUpFloor } from './measure.js';
import { transactionBundles } from './synthetic-dataset.js';
import { compareProcesses } from './process-scaling.js';

const PATIENTS = Number(process.env.BENCH_PATIENTS ?? 1000);
/**
 * Timed requests per query and concurrency. V8 takes a few thousand requests to settle: with 300
 * the p50s on PostgreSQL were 1.3–1.6× those of a 1,500-request run (Q2 1.73 against 1.29 ms,
 * Q3 2.52 against 1.57), and the query timed first after a pause was slower still.
 */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
/** Warm-up requests per query, before any is timed. */
const WARMUP = 1000;
/** Medplum 5.0.2 on PostgreSQL and Redis, same data and machine kind, one request at a time (ms). */
const MEDPLUM_P50: Record<string, number> = {
  Q1: 7.0,
  Q2: 7.6,
  Q3: 7.8,
  Q4: 6.7,
  Q5: 10.8,
  Q6: 6.9,
  Q7: 6.6,
  Q8: 15.2,
};

/** Time for the server's background ANALYZE after loading. */
const STATISTICS_WAIT_MS = 5000;
/** Requests per query, each with other variables, sent in turn. */
const VARIANTS = 200;
/** Rounds of Q1 and the floor in turn at concurrency 16, for the target's ratio. */
const FLOOR_ROUNDS = 5;

const processArgument = process.argv.indexOf('--processes');
const processCounts = (
  processArgument >= 0 ? process.argv[processArgument + 1] : process.env.BENCH_PROCESSES
)
  ?.split(',')
  .map(Number);
if (processCounts) {
  const client = new LoadClient();
  await compareProcesses(processCounts, {
    client,
    // Longer rounds than the latency bench's: a round of 2,000 lasts a fifth of a second, in which
    // one collection or a process still compiling moves the rate by a third.
    requests: Number(process.env.BENCH_REQUESTS ?? 20_000),
    warmup: 10_000,
    load,
    graphqlRequest,
  });
  client.close();
  process.exit(0);
}

const floor = await startFloor();
const client = new LoadClient();
// As warm as the server will be: WARMUP requests for each query.
await warmUpFloor(client, floor, WARMUP * Object.keys(QUERIES).length);
for (const engine of await availableEngines()) {
  const server = await startBenchServer(engine);
  try {
    const ids = await load(server);
    const requestsOf = (query: (typeof QUERIES)[string]) =>
      Array.from({ length: VARIANTS }, (_, i) => graphqlRequest(server, ...query(ids, i)));
    // Steady state: every query's code path compiled and its rows read once before any is timed.
    for (const query of Object.values(QUERIES))
      await client.measure({
        url: server.url,
        requests: requestsOf(query),
        count: WARMUP,
        concurrency: 4,
      });
    for (const concurrency of [1, 16]) {
      await measureFloor(client, floor, REQUESTS, concurrency, `${engine} c=${concurrency}`);
      for (const [name, query] of Object.entries(QUERIES)) {
        const result = await client.measure({
          url: server.url,
          requests: requestsOf(query),
          count: REQUESTS,
          concurrency,
        });
        const vsMedplum =
          concurrency === 1
            ? `  ${(MEDPLUM_P50[name] / result.p50).toFixed(1)}× faster than Medplum's ${MEDPLUM_P50[name]} ms`
            : '';
        console.log(
          `${engine} c=${concurrency} ${name}  p50 ${result.p50.toFixed(2)} ms  p99 ${result.p99.toFixed(2)} ms  ${result.rps.toFixed(0)} req/s${vsMedplum}`,
        );
      }
    }
    // Values in the text: as many texts as patients, more than the server keeps plans for, so
    // that each text is new to it; the variables form beside it, over as many patients.
    const everyPatient = (query: (typeof QUERIES)[string]) =>
      ids.patients.map((_, i) => graphqlRequest(server, ...query(ids, i)));
    for (const concurrency of [1, 16]) {
      for (const name of Object.keys(LITERAL_QUERIES)) {
        const measure = (query: (typeof QUERIES)[string]) =>
          client.measure({
            url: server.url,
            requests: everyPatient(query),
            count: REQUESTS,
            concurrency,
          });
        const variables = await measure(QUERIES[name]);
        const literal = await measure(LITERAL_QUERIES[name]);
        console.log(
          `${engine} c=${concurrency} ${name} id in the text, a new text each request: p50 ${literal.p50.toFixed(2)} ms, ${literal.rps.toFixed(0)} req/s; in variables: p50 ${variables.p50.toFixed(2)} ms, ${variables.rps.toFixed(0)} req/s; p50 ratio ${(literal.p50 / variables.p50).toFixed(2)}`,
        );
      }
    }
    const q1 = {
      url: server.url,
      requests: requestsOf(QUERIES.Q1),
      count: REQUESTS,
      concurrency: 16,
      serverPid: server.pid,
    };
    const ratios = await againstFloor(client, floor, q1, FLOOR_ROUNDS);
    const percent = (ratio: number) => `${(100 * ratio).toFixed(0)}%`;
    console.log(
      `${engine} c=16 Q1 and the floor in turn, ${FLOOR_ROUNDS} times: ${spread(ratios.throughput, percent)} of the floor's requests/s (target: 50%)`,
    );
    console.log(`${engine} c=16 Q1 ${cpuLine(ratios)}`);
  } finally {
    await server.stop();
  }
}
floor.close();
client.close();
console.log("Medplum's Q1 at concurrency 16: 320 requests/s.");

async function load(server: BenchServer): Promise<Ids> {
  for (const bundle of transactionBundles(PATIENTS, 500)) {
    const response = await server.fhir('/', { method: 'POST', body: bundle });
    if (response.status !== 200) throw new Error(`load failed: ${response.status}`);
  }
  // The server brings its planner statistics up to date in the background after big writes.
  await new Promise((resolve) => setTimeout(resolve, STATISTICS_WAIT_MS));
  const ids = async (type: string) => {
    const response = await server.fhir(`/${type}?_count=1000&_elements=id&_total=none`);
    const bundle = (await response.json()) as { entry: { resource: { id: string } }[] };
    return bundle.entry.map((e) => e.resource.id);
  };
  return { patients: await ids('Patient'), reports: await ids('DiagnosticReport') };
}

function graphqlRequest(
  server: BenchServer,
  query: string,
  variables: Record<string, unknown>,
): LoadRequest {
  return {
    method: 'POST',
    path: '/fhir/R4/$graphql',
    headers: {
      'Content-Type': 'application/json',
      Authorization: `Bearer ${server.token}`,
    },
    body: JSON.stringify({ query, variables }),
    refuse: '"errors"',
  };
}

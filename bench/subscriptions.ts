/**
 * Subscriptions end to end, against a server process as `npm start` runs it, on each engine:
 *
 * - deliveries per second and latency from write to bot start (p50, p99) with the job queue's
 *   concurrency (GRAPHIR_JOBS_CONCURRENCY) at 1 and 16: Patients written by 16 concurrent
 *   clients, each matching a Subscription whose endpoint is a bot that writes a Basic stamped
 *   with the time it started. Deliveries per second: a burst, first write sent to last bot
 *   start. Latency: writes paced every PACE_MS, each write's send time to its bot's start (one
 *   clock: the server runs on this machine);
 * - REST create p50 and p99 (one client) with no Subscription in the project and with 20 that
 *   match every create, rest-hooks to a loopback server that answers at once: each create once
 *   the previous one's 20 deliveries arrived (what the write itself pays: the lookup and the
 *   enqueue), and back to back (the deliveries' work shares the machine with the writes).
 *
 * `npm run bench:subscriptions`; figures in docs/performance.md. BENCH_BASELINE_ROOT: another
 * checkout, built, whose create p50 without Subscriptions is measured in turn with this one's.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { availableEngines, type Engine } from '../test/support/test-databases.js';
import { startBenchServer, type BenchServer } from './bench-server.js';
import { measure, percentile } from './measure.js';

const BURST = 400;
const PACED = 200;
const PACE_MS = 50;
const CREATES = 1_000;
/** Creates timed one at a time, each after the last one's deliveries and their aftermath. */
const DRAINED_CREATES = 300;
/** After the deliveries arrived: their AuditEvents (written 25 ms later) and job completions. */
const SETTLE_MS = 100;
const SYSTEM = 'urn:bench:subscriptions';

/** Writes a Basic naming the Patient it was given and the time it started. */
const STAMPING_BOT = `export async function handler(fhir, event) {
  const started = Date.now();
  await fhir.createResource({
    resourceType: 'Basic',
    code: { text: 'bench' },
    identifier: [{ system: '${SYSTEM}', value: event.input.identifier[0].value }],
    extension: [{ url: '${SYSTEM}:started', valueString: String(started) }],
  });
}`;

const engines = await availableEngines();
for (const engine of engines)
  for (const concurrency of [1, 16]) await deliveries(engine, concurrency);
const hooks = await startHooks();
try {
  for (const engine of engines) await creates(engine, hooks);
} finally {
  hooks.server.close();
}

async function deliveries(engine: Engine, concurrency: number): Promise<void> {
  const server = await startBenchServer(engine, {
    GRAPHIR_JOBS_CONCURRENCY: String(concurrency),
    LOG_LEVEL: 'silent',
  });
  try {
    const bot = await created(server, 'Bot', {
      resourceType: 'Bot',
      name: 'stamp',
      code: STAMPING_BOT,
    });
    await created(server, 'Subscription', subscription('Patient', `Bot/${bot.id}`));
    // Warm-up: the bot's bundle, the sandbox workers, prepared statements.
    await burst(server, 'warm', 40);
    await stamps(server, 'warm', 40);

    const started = Date.now();
    await burst(server, 'burst', BURST);
    const burstStarts = await stamps(server, 'burst', BURST);
    const seconds = (Math.max(...burstStarts.values()) - started) / 1000;

    const sent = new Map<string, number>();
    for (let n = 0; n < PACED; n++) {
      const value = `paced-${n}`;
      sent.set(value, Date.now());
      void write(server, value);
      await sleep(PACE_MS);
    }
    const pacedStarts = await stamps(server, 'paced', PACED);
    const latencies = [...sent].map(([value, at]) => pacedStarts.get(value)! - at);
    console.log(
      `${engine.padEnd(8)} jobs concurrency ${String(concurrency).padStart(2)}  ` +
        `${(BURST / seconds).toFixed(0)} deliveries/s  write → bot start p50 ${percentile(latencies, 50).toFixed(1)} ms  p99 ${percentile(latencies, 99).toFixed(1)} ms`,
    );
  } finally {
    await server.stop();
  }
}

async function creates(engine: Engine, hooks: Hooks): Promise<void> {
  const hookUrl = hooks.url;
  const baselineRoot = process.env.BENCH_BASELINE_ROOT;
  if (baselineRoot) {
    // In turn, twice each: the machine's speed drifts within a run.
    for (const round of [1, 2])
      for (const [label, root] of [
        ['baseline', baselineRoot],
        ['this', undefined],
      ] as const) {
        const server = await startBenchServer(engine, { LOG_LEVEL: 'silent' }, root);
        try {
          report(
            engine,
            `${label} (round ${round}), no Subscription`,
            await createTimes(server, CREATES),
          );
        } finally {
          await server.stop();
        }
      }
  }
  const server = await startBenchServer(engine, {
    GRAPHIR_EGRESS_ALLOW: '127.0.0.1',
    LOG_LEVEL: 'silent',
  });
  try {
    report(engine, 'no Subscription', await createTimes(server, CREATES));
    // Paced as the drained creates below are, for a like-for-like comparison.
    report(
      engine,
      'no Subscription, paced',
      await createTimes(server, DRAINED_CREATES, () => sleep(SETTLE_MS)),
    );
    for (let i = 0; i < 20; i++)
      await created(server, 'Subscription', subscription('Patient', `${hookUrl}/hook`));
    hooks.restart();
    report(
      engine,
      '20 matching, deliveries drained',
      await createTimes(server, DRAINED_CREATES, async () => {
        await hooks.arrived(20);
        await sleep(SETTLE_MS);
      }),
    );
    report(engine, '20 matching, back to back', await createTimes(server, CREATES));
  } finally {
    await server.stop();
  }
}

function report(engine: Engine, what: string, figures: { p50: number; p99: number }): void {
  console.log(
    `${engine.padEnd(8)} REST create, ${what.padEnd(34)} p50 ${figures.p50.toFixed(2)} ms  p99 ${figures.p99.toFixed(2)} ms`,
  );
}

/** `count` creates by one client, each after `between` resolved (after a warm-up of 20). */
async function createTimes(server: BenchServer, count: number, between?: () => Promise<void>) {
  let n = 0;
  if (!between) return measure(count, 1, () => write(server, `create-${n++}`));
  const times: number[] = [];
  for (let i = 0; i < count + 20; i++) {
    const started = performance.now();
    await write(server, `create-${n++}`);
    if (i >= 20) times.push(performance.now() - started);
    await between();
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

function subscription(criteria: string, endpoint: string) {
  return {
    resourceType: 'Subscription',
    status: 'requested',
    reason: 'bench',
    criteria,
    channel: { type: 'rest-hook', endpoint },
  };
}

async function write(server: BenchServer, value: string): Promise<void> {
  await created(server, 'Patient', {
    resourceType: 'Patient',
    identifier: [{ system: SYSTEM, value }],
  });
}

async function created(server: BenchServer, type: string, body: object): Promise<any> {
  const response = await server.fhir(`/${type}`, { method: 'POST', body });
  const json = await response.json();
  if (response.status !== 201)
    throw new Error(`${type}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

/** `count` writes named `prefix-n`, from 16 concurrent clients. */
async function burst(server: BenchServer, prefix: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < count) await write(server, `${prefix}-${next++}`);
    }),
  );
}

/** Each `prefix-n` write's bot start, once all `count` bots ran. */
async function stamps(
  server: BenchServer,
  prefix: string,
  count: number,
): Promise<Map<string, number>> {
  for (let polls = 0; ; polls++) {
    const response = await server.fhir(`/Basic?identifier=${SYSTEM}|&_count=1000&_total=none`);
    const bundle = await response.json();
    const found = new Map<string, number>();
    for (const { resource } of bundle.entry ?? []) {
      const value = resource.identifier[0].value as string;
      if (value.startsWith(`${prefix}-`))
        found.set(value, Number(resource.extension[0].valueString));
    }
    if (found.size >= count) return found;
    if (polls > 1_200)
      throw new Error(`${found.size} of ${count} ${prefix} deliveries after 2 minutes`);
    await sleep(100);
  }
}

type Hooks = Awaited<ReturnType<typeof startHooks>>;

/** The rest-hook endpoint: answers 200 at once, and counts what arrives. */
async function startHooks() {
  let count = 0;
  /** The count `arrived` waits beyond: where the current phase started, plus what it waited for. */
  let expected = 0;
  let waiting: { until: number; resolve: () => void } | undefined;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200).end();
      count++;
      if (waiting && count >= waiting.until) waiting.resolve();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** From now on, `arrived` counts from what has arrived so far. */
    restart(): void {
      expected = count;
    },
    /** Resolves once `more` requests arrived beyond those the last call waited for. */
    arrived(more: number): Promise<void> {
      const until = (expected += more);
      return new Promise((resolve) => {
        waiting = { until, resolve };
        if (count >= until) resolve();
      });
    },
  };
}

/**
 * The durable job queue (runtime/jobs/) on each engine's real database, with a job kind that
 * does nothing: the queue's own cost. At concurrency 1 and 16, jobs per second for a burst of
 * jobs enqueued together (enqueue to the last one done), and latency from enqueue to start
 * (p50, p99) for jobs enqueued one at a time every few milliseconds. `npm run bench:jobs`;
 * figures in docs/jobs.md.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobKind } from '../runtime/jobs/job-queue.js';
import { openJobQueue } from '../runtime/jobs/open-job-queue.js';
import { availableEngines, type Engine } from '../test/support/test-databases.js';
import { openBenchDatabase } from './bench-database.js';
import { percentile } from './measure.js';

const BURST = { pglite: 1_000, postgres: 2_000 };
const PACED = 300;
const PACE_MS = 5;

interface Timing {
  readonly enqueued: number;
}

for (const engine of await availableEngines()) {
  for (const concurrency of [1, 16]) await run(engine, concurrency);
}

async function run(engine: Engine, concurrency: number): Promise<void> {
  const database = await openBenchDatabase(engine);
  const waits: number[] = [];
  let done = 0;
  const kind: JobKind<Timing> = {
    name: 'bench-noop',
    run: async ({ enqueued }) => {
      waits.push(now() - enqueued);
      done++;
    },
    abandon: async () => {},
  };
  const queue = openJobQueue(database.db, { concurrency, pollIntervalMs: 2_000, maxAttempts: 5 });
  queue.define(kind);
  await queue.start();
  try {
    // Warm-up: connections, prepared statements, JIT.
    for (let i = 0; i < 50; i++) await queue.enqueue(kind, { enqueued: now() });
    await until(() => done === 50);

    const burst = BURST[engine];
    done = 0;
    const started = now();
    await Promise.all(
      Array.from({ length: burst }, () => queue.enqueue(kind, { enqueued: now() })),
    );
    const enqueuedMs = now() - started;
    await until(() => done === burst);
    const seconds = (now() - started) / 1000;

    waits.length = 0;
    done = 0;
    for (let i = 0; i < PACED; i++) {
      await queue.enqueue(kind, { enqueued: now() });
      await sleep(PACE_MS);
    }
    await until(() => done === PACED);
    console.log(
      `${engine.padEnd(8)} concurrency ${String(concurrency).padStart(2)}: ` +
        `${Math.round(burst / seconds)} jobs/s (${burst} enqueued at once in ${Math.round(enqueuedMs)} ms); ` +
        `enqueue → start, one every ${PACE_MS} ms: p50 ${percentile(waits, 50).toFixed(1)} ms, p99 ${percentile(waits, 99).toFixed(1)} ms`,
    );
  } finally {
    await queue.stop();
    await database.drop();
  }
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await sleep(1);
}

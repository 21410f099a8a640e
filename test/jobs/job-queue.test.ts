/**
 * The job queue itself on each engine's real database (graphile-worker on PostgreSQL, the
 * embedded runner on PGlite), with kinds of the test's own: retries after graphile-worker's
 * backoff (e^1 s, then e^2 s) up to the maximum, then the job abandoned with its last error, a
 * retry whose timer fires before the database's clock reaches its time run all the same; jobs
 * of one key one at a time in enqueue order.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobKind, JobQueue } from '../../runtime/jobs/job-queue.js';
import { openJobQueue } from '../../runtime/jobs/open-job-queue.js';
import { Metrics } from '../../runtime/observability/metrics.js';
import {
  availableEngines,
  createTestDatabase,
  type Engine,
  type TestDatabase,
} from '../support/test-databases.js';

const engines = await availableEngines();

async function until(done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(50);
  }
}

describe.each(engines)('the job queue (%s)', (engine: Engine) => {
  let database: TestDatabase;
  let queue: JobQueue;
  const metrics = new Metrics({ defaultMetrics: false });
  const attempts = new Map<string, number[]>();
  const abandoned: { name: string; reason: string }[] = [];
  const runs: { key: string; n: number; at: 'start' | 'end' }[] = [];

  /** Fails until its `succeedOn`-th attempt; `succeedOn` past the maximum: always fails. */
  const flaky: JobKind<{ name: string; succeedOn: number }> = {
    name: 'test-flaky',
    run: async ({ name, succeedOn }, attempt) => {
      attempts.set(name, [...(attempts.get(name) ?? []), Date.now()]);
      if (attempt.attempt < succeedOn) throw new Error(`${name} failed attempt ${attempt.attempt}`);
    },
    abandon: async ({ name }, reason) => {
      abandoned.push({ name, reason });
    },
  };
  const ordered: JobKind<{ key: string; n: number }> = {
    name: 'test-ordered',
    run: async ({ key, n }) => {
      runs.push({ key, n, at: 'start' });
      await sleep(Math.random() * 15);
      runs.push({ key, n, at: 'end' });
    },
    abandon: async () => {},
  };

  /** Fails its first attempt. */
  const lateAttempts: number[] = [];
  const late: JobKind<Record<string, never>> = {
    name: 'test-late',
    run: async (_payload, attempt) => {
      lateAttempts.push(attempt.attempt);
      if (attempt.attempt === 1) throw new Error('first attempt failed');
    },
    abandon: async () => {},
  };

  beforeAll(async () => {
    database = await createTestDatabase(engine);
    queue = openJobQueue(
      database.db,
      { concurrency: 4, pollIntervalMs: 100, maxAttempts: 3 },
      { metrics },
    );
    queue.define(flaky);
    queue.define(ordered);
    queue.define(late);
    await queue.start();
  });
  afterAll(async () => {
    await queue?.stop();
    await database?.drop();
  });

  it('retries a failing job after a growing backoff, and abandons it after the last attempt', async () => {
    await queue.enqueue(flaky, { name: 'recovers', succeedOn: 3 });
    await queue.enqueue(flaky, { name: 'doomed', succeedOn: 99 });
    await until(() => attempts.get('recovers')?.length === 3 && abandoned.length === 1, 40_000);
    for (const name of ['recovers', 'doomed']) {
      const [first, second, third] = attempts.get(name)!;
      // e^1 ≈ 2.7 s, then e^2 ≈ 7.4 s (lower bounds only: the machine may be slow).
      expect(second - first).toBeGreaterThanOrEqual(2_500);
      expect(third - second).toBeGreaterThanOrEqual(7_000);
    }
    expect(abandoned).toEqual([
      { name: 'doomed', reason: 'Failed 3 times; the last error: doomed failed attempt 3' },
    ]);
    await sleep(300);
    expect(attempts.get('doomed')).toHaveLength(3);
    expect((await queue.queued()).get('test-flaky')).toBe(0);
    const counted = await metrics.jobAttempts.get();
    const count = (outcome: string) =>
      counted.values.find((v) => v.labels.kind === 'test-flaky' && v.labels.outcome === outcome)
        ?.value;
    expect([count('retried'), count('failed'), count('completed')]).toEqual([4, 1, 1]);
  }, 60_000);

  // The embedded queue wakes by a timer for each retry (graphile-worker polls): a timer that
  // fires before the database's clock reaches the job's time must not leave it waiting forever.
  it.runIf(engine === 'pglite')(
    'retries a job whose retry timer fired before the database clock reached its time',
    async () => {
      await queue.enqueue(late, {});
      const scheduled = async () =>
        (
          await database.db.query<{ count: number }>(
            `SELECT count(*)::int AS count FROM job
              WHERE kind = 'test-late' AND attempts = 1 AND locked_at IS NULL`,
          )
        ).rows[0].count === 1;
      const deadline = Date.now() + 10_000;
      while (!(await scheduled())) {
        if (Date.now() > deadline) throw new Error('the first attempt did not fail');
        await sleep(20);
      }
      // As if the database's clock were 600 ms behind the timer's.
      await database.db.query(
        `UPDATE job SET run_at = run_at + interval '600 milliseconds' WHERE kind = 'test-late'`,
      );
      await until(() => lateAttempts.length === 2, 15_000);
      expect(lateAttempts).toEqual([1, 2]);
    },
    20_000,
  );

  it('stores a job enqueued in a transaction only if it commits', async () => {
    await expect(
      database.db.transaction(async (tx) => {
        await queue.enqueue(ordered, { key: 'rolled-back', n: 0 }, { tx });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await database.db.transaction((tx) =>
      queue.enqueue(ordered, { key: 'committed', n: 0 }, { tx, key: 'committed' }),
    );
    await until(() => runs.some((run) => run.key === 'committed' && run.at === 'end'));
    await sleep(300);
    expect(runs.filter((run) => run.key === 'rolled-back')).toEqual([]);
    runs.length = 0;
  });

  it('runs the jobs of one key one at a time, in the order they were enqueued', async () => {
    // Longer than graphile-worker's 128-character queue names, as a Subscription's and a
    // resource's references together may be.
    const long = `project/Subscription/${'s'.repeat(64)}/Observation/${'o'.repeat(64)}`;
    const keys = ['Patient/a', 'Patient/b', 'Patient/c', long];
    for (let n = 0; n < 30; n++) {
      const key = keys[n % keys.length];
      await queue.enqueue(ordered, { key, n }, { key });
    }
    await until(() => runs.filter((run) => run.at === 'end').length === 30);
    for (const key of keys) {
      const mine = runs.filter((run) => run.key === key);
      // start n, end n, start n', end n', … with n rising: never two at once, never out of order.
      const expected = mine
        .filter((run) => run.at === 'start')
        .map((run) => run.n)
        .sort((a, b) => a - b)
        .flatMap((n) => [
          { key, n, at: 'start' },
          { key, n, at: 'end' },
        ]);
      expect(mine).toEqual(expected);
    }
  });
});

/**
 * The queue on PostgreSQL: graphile-worker (its tables in the schema graphile_worker, made by
 * its own migrations at start). Each process runs a pool of workers that LISTEN for new jobs and
 * take them with `FOR UPDATE SKIP LOCKED`, so a job runs in one process at a time; a key is a
 * graphile-worker queue name, whose jobs run one at a time in order. What Graphir adds: jobs of
 * dead processes released at once (process-liveness.ts) and jobs stranded on their last attempt
 * abandoned, both by a sweep at start and every SWEEP_MS.
 */
import { createHash, randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import {
  Logger as WorkerLogger,
  makeWorkerUtils,
  run,
  runMigrations,
  type Runner,
  type TaskList,
  type WorkerUtils,
} from 'graphile-worker';
import type { Logger } from '../observability/logger.js';
import { abandonStranded, runAttempt, type AttemptDeps } from './job-attempt.js';
import {
  JobKinds,
  type EnqueueOptions,
  type JobKind,
  type JobQueue,
  type JobSettings,
} from './job-queue.js';
import { ProcessLiveness } from './process-liveness.js';

const SCHEMA = 'graphile_worker';
/** How often dead processes' jobs are looked for, and stranded ones abandoned. */
const SWEEP_MS = 5_000;
/** Empty named queues (keys) are removed this often: graphile-worker keeps a row per name. */
const GC_QUEUES_MS = 10 * 60_000;

/**
 * graphile-worker's tables on the database at `url`, as a queue's start makes them: for a
 * template database that many others are copied from (tests).
 */
export async function migrateGraphileWorker(url: string): Promise<void> {
  await runMigrations({ connectionString: url, schema: SCHEMA, logger: workerLogger(undefined) });
}

export interface GraphileQueueOptions extends AttemptDeps {
  readonly url: string;
  /** How long stop() lets running jobs end before they are cancelled. */
  readonly shutdownMs?: number;
}

export class GraphileJobQueue implements JobQueue {
  private readonly kinds = new JobKinds();
  private readonly liveness: ProcessLiveness;
  private readonly pool: pg.Pool;
  private runner: Runner | undefined;
  private utils: WorkerUtils | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private lastQueueGc = Date.now();

  constructor(
    private readonly settings: JobSettings,
    private readonly options: GraphileQueueOptions,
  ) {
    this.liveness = new ProcessLiveness(options.url, randomUUID(), options.logger);
    // Its own connections: a LISTEN one, and one per running job at most while it is taken,
    // completed or failed; requests never wait behind the queue, nor it behind them.
    this.pool = new pg.Pool({ connectionString: options.url, max: settings.concurrency + 2 });
    // A lost connection must not crash the process: idle ones report on the pool, checked-out
    // ones on themselves; the statement that was using it fails and is retried.
    this.pool.on('error', () => {});
    this.pool.on('connect', (client) => client.on('error', () => {}));
  }

  define<P>(kind: JobKind<P>): void {
    this.kinds.define(kind);
  }

  async enqueue<P>(kind: JobKind<P>, payload: P, options: EnqueueOptions = {}): Promise<string> {
    const maxAttempts = options.maxAttempts ?? this.settings.maxAttempts;
    if (options.tx) {
      // graphile-worker's own SQL function, in the caller's transaction; its NOTIFY, like the
      // row, takes effect on commit.
      const { rows } = await options.tx.query<{ id: string }>(
        `SELECT (${SCHEMA}.add_job($1, $2::json, queue_name => $3, max_attempts => $4)).id`,
        [kind.name, JSON.stringify(payload), queueName(options.key) ?? null, maxAttempts],
      );
      return String(rows[0].id);
    }
    if (!this.utils) throw new Error('The job queue has not started');
    const job = await this.utils.addJob(kind.name, payload as object, {
      maxAttempts,
      ...(options.key === undefined ? {} : { queueName: queueName(options.key) }),
    });
    return String(job.id);
  }

  async start(): Promise<void> {
    const logger = workerLogger(this.options.logger);
    this.utils = await makeWorkerUtils({ pgPool: this.pool, schema: SCHEMA, logger });
    // Its migrations, before the sweep reads its tables; several processes may start at once.
    await this.utils.migrate();
    await this.liveness.open();
    await this.sweep();
    const events = new EventEmitter();
    events.on('pool:create', ({ workerPool }: { workerPool: { id: string } }) => {
      this.liveness.addPool(workerPool.id).catch((error: unknown) => {
        this.options.logger?.error({ err: error }, 'could not register a worker pool');
      });
    });
    this.runner = await run({
      pgPool: this.pool,
      schema: SCHEMA,
      concurrency: this.settings.concurrency,
      pollInterval: this.settings.pollIntervalMs,
      noHandleSignals: true,
      // No crontab file is read from the working directory.
      crontab: '',
      taskList: this.taskList(),
      logger,
      events,
      ...(this.options.shutdownMs === undefined
        ? {}
        : { gracefulShutdownAbortTimeout: this.options.shutdownMs }),
    });
    this.sweeper = setInterval(() => {
      this.sweeping ??= this.sweep()
        .catch((error: unknown) => this.options.logger?.error({ err: error }, 'job sweep failed'))
        .finally(() => (this.sweeping = undefined));
    }, SWEEP_MS);
    this.sweeper.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await this.sweeping;
    await this.runner?.stop();
    await this.utils?.release();
    await this.liveness.close();
    await this.pool.end();
  }

  async queued(): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<{ kind: string; count: string }>(
      `SELECT task_identifier AS kind, count(*) AS count FROM ${SCHEMA}.jobs
       WHERE locked_at IS NULL AND attempts < max_attempts GROUP BY task_identifier`,
    );
    const counts = new Map(this.kinds.names.map((name) => [name, 0]));
    for (const row of rows) counts.set(row.kind, Number(row.count));
    return counts;
  }

  private taskList(): TaskList {
    const list: TaskList = {};
    for (const [name, kind] of this.kinds.entries()) {
      list[name] = async (payload, helpers) => {
        const { job } = helpers;
        await runAttempt(
          kind,
          {
            id: String(job.id),
            kind: name,
            payload,
            attempts: job.attempts,
            maxAttempts: job.max_attempts,
            createdAt: new Date(job.created_at),
          },
          this.options,
        );
      };
    }
    return list;
  }

  /** Releases dead processes' jobs; abandons those that were on their last attempt. */
  private async sweep(): Promise<void> {
    const utils = this.utils!;
    const dead = await this.liveness.deadPools(this.pool, SCHEMA);
    if (dead.length > 0) {
      await utils.forceUnlockWorkers(dead);
      this.options.logger?.warn({ pools: dead }, 'released the jobs of stopped processes');
    }
    const { rows } = await this.pool.query<{ id: string; kind: string }>(
      `SELECT id, task_identifier AS kind FROM ${SCHEMA}.jobs
       WHERE locked_at IS NULL AND attempts >= max_attempts AND task_identifier = ANY ($1::text[])`,
      [this.kinds.names],
    );
    if (rows.length > 0) {
      const kinds = new Map(rows.map((row) => [String(row.id), row.kind]));
      // Read with their payloads (graphile-worker's jobs view has none); kept until abandoned.
      const stranded = await utils.permanentlyFailJobs([...kinds.keys()], 'stranded');
      for (const job of stranded) {
        const name = kinds.get(String(job.id))!;
        const job_ = { id: String(job.id), kind: name, payload: job.payload };
        await abandonStranded(this.kinds.get(name)!, job_, this.options);
      }
      await utils.completeJobs([...kinds.keys()]);
    }
    if (Date.now() - this.lastQueueGc > GC_QUEUES_MS) {
      this.lastQueueGc = Date.now();
      await utils.cleanup({ tasks: ['GC_JOB_QUEUES'] });
    }
  }
}

/** graphile-worker's log lines into the server's logger; a completed job is debug. */
function workerLogger(logger: Logger | undefined): WorkerLogger {
  return new WorkerLogger(() => (level, message, meta) => {
    if (!logger) return;
    const fields = { queue: 'graphile-worker', ...meta };
    if (level === 'error') logger.error(fields, message);
    else if (level === 'warning') logger.warn(fields, message);
    else logger.debug(fields, message);
  });
}

/** graphile-worker's longest queue name. */
const MAX_QUEUE_NAME = 128;

/**
 * A key as a queue name: as it is when it fits, else its SHA-256 (a Subscription's and a
 * resource's references together may not). One key always gives the same name.
 */
function queueName(key: string | undefined): string | undefined {
  if (key === undefined || key.length <= MAX_QUEUE_NAME) return key;
  return `sha256:${createHash('sha256').update(key).digest('base64url')}`;
}

/**
 * The durable job queue every process shares, in the database: background work (a bot run for
 * `Prefer: respond-async`, later a Subscription's delivery) is a job of a kind, run at least once
 * by whichever process takes it, retried after a backoff up to a maximum of attempts, and taken
 * up again when the process running it dies. Two implementations of one contract: graphile-worker
 * on PostgreSQL (graphile-queue.ts), an in-process runner over a table of the same design on
 * PGlite (embedded-queue.ts). docs/jobs.md says why.
 */

import type { Transaction } from '../store/database.js';

/** What the server's configuration says (GRAPHIR_JOBS_*). */
export interface JobSettings {
  /** Jobs run at once by this process. */
  readonly concurrency: number;
  /** How often idle workers look for jobs that are due (retries); new jobs wake them at once. */
  readonly pollIntervalMs: number;
  /** Attempts of a job unless it says otherwise, the first one included. */
  readonly maxAttempts: number;
}

export interface JobAttempt {
  readonly jobId: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly maxAttempts: number;
}

/**
 * A kind of job: how one attempt runs, and what is left behind when the job will not run again.
 * The payload is JSON: everything another process needs to run it.
 */
export interface JobKind<P> {
  /** Unique on the database, stored with each job: renaming one strands its queued jobs. */
  readonly name: string;
  /**
   * Runs one attempt. Throwing, or the process dying, means another attempt after a backoff;
   * since a job may run more than once (at least once), running it again must be harmless.
   */
  run(payload: P, attempt: JobAttempt): Promise<void>;
  /**
   * The job has used its last attempt (`reason`: the last error, or that the process running it
   * stopped) and is dropped. May be called more than once for one job.
   */
  abandon(payload: P, reason: string): Promise<void>;
}

export interface EnqueueOptions {
  /** Jobs with the same key (a resource's reference) run one at a time, in enqueue order. */
  readonly key?: string;
  /** Instead of the configured maximum. */
  readonly maxAttempts?: number;
  /**
   * Stored in this transaction of the server's database: the job exists if and only if the
   * transaction commits (a write and the work it triggers, together), and runs after it does.
   */
  readonly tx?: Transaction;
}

export interface JobQueue {
  /** Before `start`: each kind this process may run. */
  define<P>(kind: JobKind<P>): void;
  /** Stores the job (once this resolves, it survives any crash) and returns its id. */
  enqueue<P>(kind: JobKind<P>, payload: P, options?: EnqueueOptions): Promise<string>;
  /** Starts this process's workers; jobs left by a dead process are taken up. */
  start(): Promise<void>;
  /** Takes no more jobs and waits for the running ones to end. */
  stop(): Promise<void>;
  /** Jobs waiting to run (due or retried later), by kind. */
  queued(): Promise<Map<string, number>>;
}

/** Backoff before attempt n+1 after n failed, in seconds: graphile-worker's exp(min(n, 10)). */
export function backoffSeconds(attempts: number): number {
  return Math.exp(Math.min(attempts, 10));
}

/** The kinds a queue runs, by name. */
export class JobKinds {
  private readonly kinds = new Map<string, JobKind<unknown>>();

  define<P>(kind: JobKind<P>): void {
    if (this.kinds.has(kind.name)) throw new Error(`Job kind ${kind.name} is defined twice`);
    this.kinds.set(kind.name, kind as JobKind<unknown>);
  }

  get(name: string): JobKind<unknown> | undefined {
    return this.kinds.get(name);
  }

  get names(): string[] {
    return [...this.kinds.keys()];
  }

  entries(): IterableIterator<[string, JobKind<unknown>]> {
    return this.kinds.entries();
  }
}

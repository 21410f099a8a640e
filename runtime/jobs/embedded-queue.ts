/**
 * The queue on the embedded engine: the table `job` (migration 011), graphile-worker's design,
 * run by this process alone. PGlite has one session and only this process opens its data
 * directory, so a job found locked at start was locked by a process that died: it is released,
 * and tried again like a failed attempt (its attempt was counted when it was taken).
 * graphile-worker itself needs a `pg` pool; why PGlite is not given one: docs/jobs.md.
 */
import type { Database } from '../store/database.js';
import { abandonStranded, runAttempt, type AttemptDeps, type TakenJob } from './job-attempt.js';
import {
  JobKinds,
  backoffSeconds,
  type EnqueueOptions,
  type JobKind,
  type JobQueue,
  type JobSettings,
} from './job-queue.js';

interface JobRow {
  id: string;
  kind: string;
  payload: unknown;
  attempts: number;
  max_attempts: number;
  created_at: Date | string;
}

/**
 * The next due job of this process's kinds whose key has no job running, taken: locked, its
 * attempt counted. One statement, so taking is atomic.
 */
const TAKE = `UPDATE job SET locked_at = now(), attempts = attempts + 1
WHERE id = (
  SELECT id FROM job j
  WHERE locked_at IS NULL AND run_at <= now() AND attempts < max_attempts AND kind = ANY($1::text[])
    AND (key IS NULL OR NOT EXISTS (SELECT 1 FROM job k WHERE k.key = j.key AND k.locked_at IS NOT NULL))
  ORDER BY run_at, id
  LIMIT 1
)
RETURNING id, kind, payload, attempts, max_attempts, created_at`;

/**
 * Milliseconds until the first job TAKE would take once due (key-blocked ones are woken for when
 * their key's running job ends); null when there is none. TAKE's conditions, but for `run_at`.
 */
const NEXT_DUE = `SELECT (extract(epoch FROM min(run_at) - now()) * 1000)::float8 AS wait FROM job j
WHERE locked_at IS NULL AND attempts < max_attempts AND kind = ANY($1::text[])
  AND (key IS NULL OR NOT EXISTS (SELECT 1 FROM job k WHERE k.key = j.key AND k.locked_at IS NOT NULL))`;

export class EmbeddedJobQueue implements JobQueue {
  private readonly kinds = new JobKinds();
  private readonly running = new Set<Promise<void>>();
  /**
   * A wake-up for each retry waiting for its time: one process owns an embedded database, so it
   * knows every job's due time (enqueued now, or retried later) and needs no polling.
   */
  private readonly retries = new Set<NodeJS.Timeout>();
  private started = false;
  private stopping = false;
  /** A fill in progress, and whether another was asked for meanwhile. */
  private filling = false;
  private refill = false;
  /** A retry's timer woke the queue: a fill that takes nothing checks when the next job is due. */
  private wakeWhenDue = false;

  constructor(
    private readonly db: Database,
    private readonly settings: JobSettings,
    private readonly deps: AttemptDeps = {},
  ) {}

  define<P>(kind: JobKind<P>): void {
    this.kinds.define(kind);
  }

  async enqueue<P>(kind: JobKind<P>, payload: P, options: EnqueueOptions = {}): Promise<string> {
    const { rows } = await (options.tx ?? this.db).query<{ id: string }>(
      'INSERT INTO job (kind, key, payload, max_attempts) VALUES ($1, $2, $3, $4) RETURNING id',
      [
        kind.name,
        options.key ?? null,
        JSON.stringify(payload),
        options.maxAttempts ?? this.settings.maxAttempts,
      ],
    );
    if (options.tx) options.tx.afterEnd(() => this.wake());
    else this.wake();
    return String(rows[0].id);
  }

  async start(): Promise<void> {
    await this.db.query('UPDATE job SET locked_at = NULL WHERE locked_at IS NOT NULL');
    await this.abandonExhausted();
    this.started = true;
    // Retries scheduled before the last stop.
    const { rows } = await this.db.query<{ due: Date | string | null }>(
      'SELECT min(run_at) AS due FROM job WHERE locked_at IS NULL AND attempts < max_attempts',
    );
    const due = rows[0]?.due;
    if (due) this.wakeIn(new Date(due).getTime() - Date.now());
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    for (const timer of this.retries) clearTimeout(timer);
    this.retries.clear();
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  async queued(): Promise<Map<string, number>> {
    const { rows } = await this.db.query<{ kind: string; count: string }>(
      'SELECT kind, count(*) AS count FROM job WHERE locked_at IS NULL AND attempts < max_attempts GROUP BY kind',
    );
    const counts = new Map(this.kinds.names.map((name) => [name, 0]));
    for (const row of rows) counts.set(row.kind, Number(row.count));
    return counts;
  }

  /**
   * Wakes once `ms` have passed, and then, should the database's clock not have reached the job's
   * time yet (a timer counts whole milliseconds of another clock, and may fire a fraction early),
   * again when it has: otherwise a retry nothing else wakes for would wait forever.
   */
  private wakeIn(ms: number): void {
    const timer = setTimeout(
      () => {
        this.retries.delete(timer);
        this.wakeWhenDue = true;
        this.wake();
      },
      Math.max(0, Math.ceil(ms)),
    );
    timer.unref();
    this.retries.add(timer);
  }

  /** After a retry's wake-up took nothing: the wait, by the database's clock, for the next due job. */
  private async wakeAtNextDue(): Promise<void> {
    const { rows } = await this.db.query<{ wait: number | null }>(NEXT_DUE, [this.kinds.names], {
      prepared: 'fixed',
    });
    const wait = rows[0]?.wait;
    if (wait === null || wait === undefined) return;
    if (wait > 0) this.wakeIn(wait);
    // Due since the TAKE statement a moment ago.
    else this.refill = true;
  }

  /** Takes due jobs while there are free places. */
  private wake(): void {
    if (!this.started || this.stopping) return;
    if (this.filling) {
      this.refill = true;
      return;
    }
    this.filling = true;
    void this.fill()
      .catch((error: unknown) => this.deps.logger?.error({ err: error }, 'taking jobs failed'))
      .finally(() => {
        this.filling = false;
        if (this.refill) {
          this.refill = false;
          this.wake();
        }
      });
  }

  private async fill(): Promise<void> {
    while (!this.stopping && this.running.size < this.settings.concurrency) {
      const { rows } = await this.db.query<JobRow>(TAKE, [this.kinds.names], {
        prepared: 'fixed',
      });
      if (rows.length === 0) {
        if (this.wakeWhenDue) {
          this.wakeWhenDue = false;
          await this.wakeAtNextDue();
        }
        return;
      }
      const attempt = this.attempt(taken(rows[0])).finally(() => {
        this.running.delete(attempt);
        this.wake();
      });
      this.running.add(attempt);
    }
  }

  private async attempt(job: TakenJob): Promise<void> {
    try {
      await runAttempt(this.kinds.get(job.kind)!, job, this.deps);
      await this.db.query('DELETE FROM job WHERE id = $1', [job.id]);
    } catch (error) {
      const backoff = backoffSeconds(job.attempts);
      await this.db
        .query(
          `UPDATE job SET locked_at = NULL, last_error = $2,
             run_at = now() + make_interval(secs => $3) WHERE id = $1`,
          [job.id, (error as Error)?.message ?? String(error), backoff],
        )
        .then(() => this.wakeIn(backoff * 1000))
        .catch((failure: unknown) =>
          // Left locked: released (and retried) at the next start.
          this.deps.logger?.error({ err: failure, jobId: job.id }, 'could not schedule a retry'),
        );
    }
  }

  /** Jobs whose last attempt was cut off by a dead process. */
  private async abandonExhausted(): Promise<void> {
    const { rows } = await this.db.query<JobRow>(
      'SELECT id, kind, payload FROM job WHERE locked_at IS NULL AND attempts >= max_attempts AND kind = ANY($1::text[])',
      [this.kinds.names],
    );
    for (const row of rows) {
      await abandonStranded(this.kinds.get(row.kind)!, { ...row, id: String(row.id) }, this.deps);
      await this.db.query('DELETE FROM job WHERE id = $1', [row.id]);
    }
  }
}

function taken(row: JobRow): TakenJob {
  return {
    id: String(row.id),
    kind: row.kind,
    payload: row.payload,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    createdAt: new Date(row.created_at),
  };
}

/**
 * Which graphile-worker pools belong to live processes. graphile-worker releases the jobs of a
 * process that died only after 4 hours; Graphir knows sooner: each process holds one connection
 * named `graphir-jobs/<its id>` (application_name) and lists its pools in `job_process`. When the
 * process dies, even by SIGKILL, the kernel closes the socket, PostgreSQL ends the session, and
 * the connection is gone from pg_stat_activity: its pools are dead and their jobs can be released.
 * A process that lost its connection while alive re-registers; meanwhile its jobs may be released
 * and run again elsewhere, which at-least-once allows.
 */
import pg from 'pg';
import type { Logger } from '../observability/logger.js';

const NAME_PREFIX = 'graphir-jobs/';
/** After a lost connection, how long before connecting again. */
const RECONNECT_MS = 1_000;
/**
 * A job locked by a pool no process lists was locked in the moment between the pool's start and
 * its registration, by a process that died then; after this long it is surely dead.
 */
const UNLISTED_GRACE = '1 minute';

export class ProcessLiveness {
  private client: pg.Client | undefined;
  private readonly pools: string[] = [];
  private closed = false;

  constructor(
    private readonly url: string,
    readonly processId: string,
    private readonly logger?: Logger,
  ) {}

  /** Connects, then registers: never listed without a live connection. */
  async open(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: `${NAME_PREFIX}${this.processId}`,
      keepAlive: true,
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(
      `INSERT INTO job_process (process_id, worker_ids) VALUES ($1, $2)
       ON CONFLICT (process_id) DO UPDATE SET worker_ids = excluded.worker_ids`,
      [this.processId, this.pools],
    );
    this.client = client;
  }

  /** A graphile-worker pool of this process: its jobs are this process's. */
  async addPool(poolId: string): Promise<void> {
    this.pools.push(poolId);
    await this.client?.query(
      'UPDATE job_process SET worker_ids = array_append(worker_ids, $2) WHERE process_id = $1',
      [this.processId, poolId],
    );
  }

  /**
   * The pools of processes whose connection is gone (their rows are removed), and the lockers of
   * jobs long locked by pools no process lists.
   */
  async deadPools(db: pg.Pool, workerSchema: string): Promise<string[]> {
    const { rows } = await db.query<{ id: string }>(
      `WITH dead AS (
         DELETE FROM job_process p
         WHERE NOT EXISTS (
           SELECT 1 FROM pg_stat_activity a WHERE a.application_name = $1 || p.process_id
         )
         RETURNING worker_ids
       )
       SELECT unnest(worker_ids) AS id FROM dead
       UNION
       SELECT DISTINCT j.locked_by FROM ${workerSchema}.jobs j
       WHERE j.locked_by IS NOT NULL AND j.locked_at < now() - interval '${UNLISTED_GRACE}'
         AND NOT EXISTS (SELECT 1 FROM job_process p WHERE j.locked_by = ANY (p.worker_ids))`,
      [NAME_PREFIX],
    );
    return rows.map((row) => row.id);
  }

  /** Unregisters: this process's jobs have ended (graceful stop). */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    await client
      .query('DELETE FROM job_process WHERE process_id = $1', [this.processId])
      .catch(() => {});
    await client.end().catch(() => {});
  }

  private lost(client: pg.Client): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.logger?.warn('the job queue lost its liveness connection; reconnecting');
    const retry = () => {
      if (this.closed) return;
      this.open().catch(() => setTimeout(retry, RECONNECT_MS).unref());
    };
    setTimeout(retry, RECONNECT_MS).unref();
  }
}

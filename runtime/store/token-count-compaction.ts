/**
 * Folds the delta rows of the kept token counts (migrations/014): every write adds a row per key
 * it changes, so a common value (status=final) gathers a row per write, and its count reads them
 * all. In the background, after every FOLD_AFTER_WRITES writes of a project in this process, its
 * keys' rows are folded into one per key, a bounded batch per statement, until none is left.
 *
 * A process folds the projects it writes to, and no statement reads more than one project
 * (docs/scale-out.md). Deltas a process left unfolded when it stopped stay exact, and are folded
 * once some process writes to their project again.
 */
import type { Database } from './database.js';
import type { MaintenanceFailed } from './maintenance-failed.js';

/** Writes of a project in this process between two foldings of its counts. */
const FOLD_AFTER_WRITES = 100;
/**
 * Unfolded rows one statement takes (with every other row of their keys). Few enough that
 * PostgreSQL finds their keys' rows by index: with 1,000, it hashed all of a big project's rows
 * instead (35,000 at 1M resources, 21 ms; 200 took 2.5 ms).
 */
const BATCH_ROWS = 200;
/** Statements one project gets before the next project due has its turn. */
const BATCHES_PER_TURN = 50;

/**
 * One statement: the keys of up to $2 unfolded rows of project $1; all their rows deleted; one
 * row of each key's sum inserted, folded (none when the sum is 0). It answers how many unfolded
 * rows it took, fewer than $2 when the project had no more.
 *
 * Exact under concurrent writers and readers (READ COMMITTED): the DELETE returns exactly the
 * rows it deletes, and the INSERT adds their sum, in one statement that commits or rolls back
 * whole, so a reader sees the key's rows before or after it, with the same sum. A write's delta
 * committed after the statement's snapshot is not seen, so it is neither deleted nor summed: it
 * stays beside the new row, and writers insert without waiting for the rows deleted here.
 *
 * Two foldings at once cannot count a row twice: a row is summed only by the DELETE that deletes
 * it. When one folding deletes a row the other is about to, the other waits for its commit, then
 * skips the row (PostgreSQL re-checks a row deleted meanwhile and leaves it out of its DELETE and
 * of RETURNING); the row it inserted is newer than its snapshot, so the other leaves it alone.
 * Two foldings may wait for each other's rows (a deadlock): PostgreSQL ends one, whose statement
 * then changes nothing, and its rows are folded later.
 */
const FOLD = `WITH picked AS (
    SELECT DISTINCT resource_type, code, value, any_system, system FROM (
      SELECT resource_type, code, value, any_system, system FROM search_token_count
      WHERE project_id = $1::text AND NOT folded LIMIT $2::integer
    ) unfolded
  ),
  taken AS (
    DELETE FROM search_token_count c USING picked k
    WHERE c.project_id = $1::text AND c.resource_type = k.resource_type AND c.code = k.code
      AND c.value = k.value AND c.any_system = k.any_system AND c.system IS NOT DISTINCT FROM k.system
    RETURNING c.resource_type, c.code, c.value, c.any_system, c.system, c.delta, c.folded
  ),
  kept AS (
    INSERT INTO search_token_count (project_id, resource_type, code, value, any_system, system, delta, folded)
    SELECT $1::text, resource_type, code, value, any_system, system, sum(delta), true FROM taken
    GROUP BY resource_type, code, value, any_system, system
    HAVING sum(delta) <> 0
  )
  SELECT (count(*) FILTER (WHERE NOT folded))::integer AS unfolded FROM taken`;

export class TokenCountCompactor {
  private readonly writesSince = new Map<string, number>();
  /** Projects whose counts are to be folded, in turn. */
  private readonly due = new Set<string>();
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly failed: MaintenanceFailed = () => {},
  ) {}

  /** Called after each write of the project; folds its counts every FOLD_AFTER_WRITES. */
  written(projectId: string): void {
    const writes = (this.writesSince.get(projectId) ?? 0) + 1;
    if (writes < FOLD_AFTER_WRITES) {
      this.writesSince.set(projectId, writes);
      return;
    }
    this.writesSince.delete(projectId);
    this.due.add(projectId);
    this.foldInBackground();
  }

  /** Folds all of the project's unfolded rows now. */
  async fold(projectId: string): Promise<void> {
    await this.foldSome(projectId, Infinity);
  }

  /** Waits for the background folding (tests, and a server that stops). */
  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private foldInBackground(): void {
    this.running ??= this.foldDue().finally(() => {
      this.running = undefined;
      // Due after the last turn was taken, before this ran.
      if (this.due.size > 0) this.foldInBackground();
    });
  }

  /** Each project due gets a turn, again while it has unfolded rows left. */
  private async foldDue(): Promise<void> {
    for (const projectId of this.due) {
      this.due.delete(projectId);
      // A failed statement (a deadlock, the database out of reach) leaves the rows as they were,
      // exact: the project's next writes bring it back.
      const done = await this.foldSome(projectId, BATCHES_PER_TURN).catch((error: unknown) => {
        this.failed('token counts', error, { projectId });
        return true;
      });
      if (!done) this.due.add(projectId);
    }
  }

  /** Up to `batches` statements; true when the project had no unfolded rows left. */
  private async foldSome(projectId: string, batches: number): Promise<boolean> {
    for (let batch = 0; batch < batches; batch++) {
      // On PGlite a statement holds the one session: requests waiting go first.
      await requestsWaiting();
      const { rows } = await this.db.query<{ unfolded: number }>(FOLD, [projectId, BATCH_ROWS], {
        prepared: 'fixed',
      });
      if (rows[0].unfolded < BATCH_ROWS) return true;
    }
    return false;
  }
}

/** Resolves once the event loop has taken the I/O that waits (requests first, then this). */
function requestsWaiting(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

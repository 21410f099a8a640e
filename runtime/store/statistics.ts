/**
 * Keeps the query planner's statistics fresh. PGlite runs no autovacuum, and PostgreSQL's runs
 * late after bulk loads; with stale statistics the planner believes tables are empty and turns
 * an indexed search into a nested loop hundreds of times slower. So the store
 * runs VACUUM (ANALYZE) itself, in the background, whenever the tables have grown by a fifth
 * since the last time (by their row counts as that VACUUM left them, so a server restarted on a
 * large database does not start over from a few hundred rows). The VACUUM keeps the visibility
 * map current, without which the index-only scans searches are planned around (migrations/005)
 * read every row's heap page too.
 */
import type { Database } from './database.js';
import type { MaintenanceFailed } from './maintenance-failed.js';

const TABLES = [
  'resource',
  'search_string',
  'search_token',
  'search_reference',
  'search_date',
  'search_number',
  'search_quantity',
  'search_uri',
  'search_token_count',
];
const MIN_ROWS = 500;
/** The tables' rows as the planner last counted them (never-analyzed tables count 0). */
const COUNT_ROWS = `SELECT coalesce(sum(greatest(reltuples, 0)), 0)::float8 AS rows FROM pg_class
  WHERE oid IN (${TABLES.map((table) => `'${table}'::regclass`).join(', ')})`;

export class StatisticsKeeper {
  /** The tables' rows after the last VACUUM (ANALYZE). */
  private rowsAtLastAnalyze = 0;
  private rowsSince = 0;
  private running: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly failed: MaintenanceFailed = () => {},
  ) {}

  /** Called after each committed write with the number of rows it wrote. */
  written(rows: number): void {
    this.rowsSince += rows;
    if (this.rowsSince >= Math.max(MIN_ROWS, this.rowsAtLastAnalyze / 5))
      this.analyzeInBackground();
  }

  /** Starts a VACUUM (ANALYZE) unless one is running; `settled()` waits for it. */
  analyzeInBackground(): void {
    if (this.running) return;
    this.running = this.analyze().finally(() => {
      this.running = undefined;
    });
  }

  /** VACUUM (ANALYZE) every table the searches read. */
  async analyze(): Promise<void> {
    const rows = this.rowsSince;
    const work =
      this.db.engine === 'pglite'
        ? this.analyzeEachTable()
        : this.db.query(`VACUUM (ANALYZE) ${TABLES.join(', ')}`);
    // A failed VACUUM only leaves older statistics; the next writes try again.
    await work.catch((error: unknown) => this.failed('planner statistics', error));
    this.rowsSince -= rows;
    const counted = await this.db
      .query<{ rows: number }>(COUNT_ROWS)
      .then(({ rows: [{ rows: total }] }) => total)
      .catch(() => undefined);
    this.rowsAtLastAnalyze = counted ?? this.rowsAtLastAnalyze + rows;
  }

  /**
   * On PGlite ANALYZE runs in the server's own thread, and no request is answered meanwhile: a
   * table at a time, waiting requests are answered in between, where all tables at once held
   * them for twice as long. A smaller sample would be quicker, but its estimates made the
   * planner's choices worse (a name search estimated at 1 row instead of dozens).
   */
  private async analyzeEachTable(): Promise<void> {
    for (const table of TABLES) {
      await requestsWaiting();
      await this.db.query(`VACUUM (ANALYZE) ${table}`);
    }
  }

  /** Waits for a background VACUUM (ANALYZE) (tests and benchmarks that need settled plans). */
  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }
}

/** Resolves once the event loop has taken the I/O that waits (requests first, then this). */
function requestsWaiting(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Keeps the query planner's statistics fresh. PGlite runs no autovacuum, and PostgreSQL's runs
 * late after bulk loads; with stale statistics the planner believes tables are empty and turns
 * a 1 ms indexed search into a 500 ms nested loop (measured: 1,200 Observations). So the store
 * runs VACUUM (ANALYZE) itself, in the background, whenever the tables have grown by a fifth
 * since the last time. The VACUUM keeps the visibility map current, without which the
 * index-only scans searches are planned around (migrations/005) read every row's heap page too.
 */
import type { Database } from './database.js';

const TABLES = [
  'resource',
  'search_string',
  'search_token',
  'search_reference',
  'search_date',
  'search_number',
  'search_quantity',
  'search_uri',
];
const MIN_ROWS = 500;

export class StatisticsKeeper {
  private rowsAtLastAnalyze = 0;
  private rowsSince = 0;
  private running: Promise<void> | undefined;

  constructor(private readonly db: Database) {}

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
    await this.db.query(`VACUUM (ANALYZE) ${TABLES.join(', ')}`).catch(() => {
      // A failed VACUUM only leaves older statistics; the next write tries again.
    });
    this.rowsAtLastAnalyze += rows;
    this.rowsSince -= rows;
  }

  /** Waits for a background VACUUM (ANALYZE) (tests and benchmarks that need settled plans). */
  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }
}

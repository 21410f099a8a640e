/**
 * The planner statistics the store keeps fresh (runtime/store/statistics.ts). On PGlite, whose
 * ANALYZE runs in the server's own thread, they are gathered a table at a time, and requests
 * are answered in between.
 */
import { describe, expect, it } from 'vitest';
import { StatisticsKeeper } from '../../runtime/store/statistics.js';
import {
  availableEngines,
  createTestDatabase,
  type Engine,
  type TestDatabase,
} from '../support/test-databases.js';

async function inFreshDatabase(engine: Engine, work: (database: TestDatabase) => Promise<void>) {
  const database = await createTestDatabase(engine);
  try {
    await work(database);
  } finally {
    await database.drop();
  }
}

describe.each(await availableEngines())('planner statistics on %s', (engine) => {
  it('gathers them for the index tables', () =>
    inFreshDatabase(engine, async ({ db }) => {
      // 30 token values, each common: the sample keeps all 30 among the most common values.
      await db.query(
        `INSERT INTO search_token (project_id, resource_type, id, version_id, last_updated, code, value)
         SELECT 'p', 'Basic', g::text, 1, now(), 'code', 'v' || (g % 30) FROM generate_series(1, 3000) g`,
      );
      await new StatisticsKeeper(db).analyze();
      const { rows } = await db.query<{ common: number }>(
        `SELECT cardinality(most_common_freqs) AS common FROM pg_stats
          WHERE tablename = 'search_token' AND attname = 'value'`,
      );
      expect(rows).toEqual([{ common: 30 }]);
    }));

  it('gathers them again once the tables have grown by a fifth of their size', () =>
    inFreshDatabase(engine, async ({ db }) => {
      const insert = (from: number, to: number) =>
        db.query(
          `INSERT INTO search_token (project_id, resource_type, id, version_id, last_updated, code, value)
           SELECT 'p', 'Basic', g::text, 1, now(), 'code', 'v' FROM generate_series($1::int, $2::int) g`,
          [from, to],
        );
      const counted = async () =>
        (
          await db.query<{ rows: number }>(
            `SELECT reltuples::float8 AS rows FROM pg_class WHERE oid = 'search_token'::regclass`,
          )
        ).rows[0].rows;
      // As a server restarted on a database of 10,000 rows starts: it gathers them once.
      await insert(1, 10_000);
      const keeper = new StatisticsKeeper(db);
      await keeper.analyze();
      expect(await counted()).toBe(10_000);
      // 1,000 rows more are a tenth: not yet.
      await insert(10_001, 11_000);
      keeper.written(1_000);
      await keeper.settled();
      expect(await counted()).toBe(10_000);
      // 1,500 more make a fifth.
      await insert(11_001, 12_500);
      keeper.written(1_500);
      await keeper.settled();
      expect(await counted()).toBe(12_500);
    }));

  it.runIf(engine === 'pglite')('answers requests while it gathers them', () =>
    inFreshDatabase(engine, async ({ db }) => {
      const order: string[] = [];
      const gathering = new StatisticsKeeper(db).analyze().then(() => order.push('statistics'));
      // A request that arrives once the statistics have begun.
      const request = new Promise((resolve) => setImmediate(resolve))
        .then(() => db.query('SELECT 1'))
        .then(() => order.push('request'));
      await Promise.all([gathering, request]);
      expect(order).toEqual(['request', 'statistics']);
    }),
  );
});

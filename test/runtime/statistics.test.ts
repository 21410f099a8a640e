/**
 * The planner statistics the store keeps fresh (runtime/store/statistics.ts). On PGlite, whose
 * ANALYZE runs in the server's own thread, they are gathered a table at a time, and requests
 * are answered in between.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { StatisticsKeeper } from '../../runtime/store/statistics.js';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';

const databases: TestDatabase[] = [];
afterAll(() => Promise.all(databases.map((d) => d.drop())));

describe.each(await availableEngines())('planner statistics on %s', (engine) => {
  it('gathers them for the index tables', async () => {
    const database = await createTestDatabase(engine);
    databases.push(database);
    await database.db.query(
      `INSERT INTO search_token (project_id, resource_type, id, code, value)
       SELECT 'p', 'Basic', g::text, 'code', 'v' || (g % 30) FROM generate_series(1, 3000) g`,
    );
    await new StatisticsKeeper(database.db).analyze();
    const { rows } = await database.db.query<{ common: number }>(
      `SELECT cardinality(most_common_freqs) AS common FROM pg_stats
        WHERE tablename = 'search_token' AND attname = 'value'`,
    );
    expect(rows).toEqual([{ common: 30 }]);
  });

  it.runIf(engine === 'pglite')('answers requests while it gathers them', async () => {
    const database = await createTestDatabase(engine);
    databases.push(database);
    const order: string[] = [];
    const gathering = new StatisticsKeeper(database.db)
      .analyze()
      .then(() => order.push('statistics'));
    // A request that arrives once the statistics have begun.
    const request = new Promise((resolve) => setImmediate(resolve))
      .then(() => database.db.query('SELECT 1'))
      .then(() => order.push('request'));
    await Promise.all([gathering, request]);
    expect(order).toEqual(['request', 'statistics']);
  });
});

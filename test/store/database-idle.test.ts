/**
 * PostgreSQL connections stay open while idle for DATABASE_IDLE_TIMEOUT_SECONDS (10 minutes by
 * default), not pg's 10 seconds: a new connection is a new backend, with cold caches and none of
 * the prepared statements (runtime/store/database.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database } from '../../runtime/store/database.js';
import { openDatabase } from '../../runtime/store/open-database.js';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';

describe.runIf((await availableEngines()).includes('postgres'))(
  'idle PostgreSQL connections',
  () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase('postgres', { migrated: false });
    });
    afterAll(() => database.drop());

    /** A pool on the test database whose connections are named `name`, and a count of them. */
    const pool = (name: string, idleTimeoutMs?: number) => {
      const url = new URL(database.url!);
      url.searchParams.set('application_name', name);
      const db = openDatabase({ url: url.toString(), idleTimeoutMs });
      const open = async () =>
        Number(
          (
            await database.db.query<{ n: string }>(
              `SELECT count(*) AS n FROM pg_stat_activity
               WHERE application_name = $1 AND datname = current_database()`,
              [name],
            )
          ).rows[0].n,
        );
      return { db, open };
    };
    /** Three statements at once, so that the pool opens three connections. */
    const busy = (db: Database) =>
      Promise.all([1, 2, 3].map(() => db.query('SELECT pg_sleep(0.05)')));

    it('are closed after the idle timeout', async () => {
      const { db: opening, open } = pool('graphir_idle_short', 200);
      const db = await opening;
      try {
        await busy(db);
        expect(await open()).toBe(3);
        // Closed once idle for 200 ms; on a busy machine the timers may run late.
        await expect.poll(open, { timeout: 10_000, interval: 100 }).toBe(0);
      } finally {
        await db.close();
      }
    });

    // Longer than pg's own default of 10 s.
    it('stay open by default', { timeout: 20_000 }, async () => {
      const { db: opening, open } = pool('graphir_idle_default');
      const db = await opening;
      try {
        await busy(db);
        await new Promise((resolve) => setTimeout(resolve, 10_500));
        expect(await open()).toBe(3);
      } finally {
        await db.close();
      }
    });
  },
);

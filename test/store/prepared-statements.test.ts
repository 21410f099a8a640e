/**
 * Statements kept prepared on PostgreSQL connections (runtime/store/database.ts): fixed texts
 * at once; texts shaped by requests (searches) from their RECURRING_AFTER-th run, and never
 * more than MAX_RECURRING of them, so clients cannot fill the connections with their shapes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database } from '../../runtime/store/database.js';
import { MAX_RECURRING, RECURRING_AFTER } from '../../runtime/store/statement-names.js';
import { openDatabase } from '../../runtime/store/open-database.js';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';

const onPostgres = (await availableEngines()).includes('postgres');

describe.runIf(onPostgres)('prepared statements on PostgreSQL', () => {
  let database: TestDatabase;
  /** One connection, so that every statement lands where pg_prepared_statements looks. */
  let db: Database;

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    db = await openDatabase({ url: database.url!, poolSize: 1 });
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const preparedLike = async (pattern: string) => {
    const { rows } = await db.query<{ n: number }>(
      'SELECT count(*)::integer AS n FROM pg_prepared_statements WHERE statement LIKE $1',
      [pattern],
    );
    return rows[0].n;
  };

  it('prepares a fixed text at its first run', async () => {
    await db.query('SELECT $1::integer AS fixed_one', [1], { prepared: 'fixed' });
    expect(await preparedLike('%fixed_one%')).toBe(1);
  });

  it(`prepares a recurring text at its run number ${RECURRING_AFTER}, not before`, async () => {
    for (let run = 1; run <= RECURRING_AFTER; run++) {
      const { rows } = await db.query('SELECT $1::integer AS recurring_one', [run], {
        prepared: 'recurring',
      });
      expect(rows).toEqual([{ recurring_one: run }]);
      expect(await preparedLike('%recurring_one%')).toBe(run < RECURRING_AFTER ? 0 : 1);
    }
  });

  it('prepares inside a transaction too, and the statement outlives a rollback', async () => {
    const text = 'SELECT $1::integer AS in_transaction';
    const outcome = await db
      .transaction(async (tx) => {
        const { rows } = await tx.query(text, [1], { prepared: 'fixed' });
        expect(rows).toEqual([{ in_transaction: 1 }]);
        throw new Error('roll back');
      })
      .catch((error: Error) => error.message);
    expect(outcome).toBe('roll back');
    expect(await preparedLike('%AS in\\_transaction%')).toBe(1);
    expect((await db.query(text, [2], { prepared: 'fixed' })).rows).toEqual([
      { in_transaction: 2 },
    ]);
  });

  it(`keeps at most ${MAX_RECURRING} recurring texts prepared`, async () => {
    for (let shape = 0; shape < MAX_RECURRING + 20; shape++) {
      for (let run = 0; run < RECURRING_AFTER + 1; run++) {
        const { rows } = await db.query(`SELECT $1::integer + ${shape} AS shape_${shape}`, [run], {
          prepared: 'recurring',
        });
        expect(rows[0]).toEqual({ [`shape_${shape}`]: run + shape });
      }
    }
    // The text of the test above is one of them.
    expect(await preparedLike('%AS shape\\_%')).toBe(MAX_RECURRING - 1);
  });
});

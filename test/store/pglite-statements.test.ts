/**
 * Prepared statements on PGlite (runtime/store/pglite-statements.ts): the same rows as
 * `query()`, prepared once in PGlite's session, never run inside another caller's open
 * transaction but run inside the caller's own, and errors reported as `query()` reports them.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database } from '../../runtime/store/database.js';
import { openDatabase } from '../../runtime/store/open-database.js';

describe('prepared statements on PGlite', () => {
  let pglite: PGlite;
  let db: Database;

  beforeAll(async () => {
    pglite = await PGlite.create();
    db = await openDatabase({ pglite });
    await db.exec(
      `CREATE TABLE item (id text PRIMARY KEY, n bigint, ok boolean, at timestamptz, body jsonb, tags text[]);
       INSERT INTO item VALUES ('a', 9007199254740993, true, '2024-05-06T07:08:09.123Z', '{"x":[1,"é"]}', '{p,q}'),
                               ('b', NULL, false, NULL, NULL, NULL);`,
    );
  });
  afterAll(async () => {
    await db?.close();
  });

  const preparedLike = async (pattern: string) => {
    const { rows } = await pglite.query<{ n: number }>(
      'SELECT count(*)::integer AS n FROM pg_prepared_statements WHERE statement LIKE $1',
      [pattern],
    );
    return rows[0].n;
  };

  it('returns the rows query() returns, for every column type and parameter kind', async () => {
    const text =
      'SELECT id, n, ok, at, body, tags, $2::text AS echoed FROM item WHERE id = ANY($1::text[]) OR $3::jsonb IS NULL ORDER BY id';
    const cases: unknown[][] = [
      [['a'], 'hé', { k: 1 }],
      [['a', 'b'], null, null],
      [[], 'x', [1, 2]],
    ];
    for (const values of cases) {
      const plain = await pglite.query(text, values);
      const prepared = await db.query(text, values, { prepared: 'fixed' });
      expect(prepared.rows).toEqual(plain.rows);
    }
    expect(await preparedLike('%AS echoed%')).toBe(1);
  });

  it('prepares a text once, also for a second Database over the same PGlite', async () => {
    const text = 'SELECT count(*)::integer AS once FROM item WHERE id <> $1';
    const other = await openDatabase({ pglite });
    for (const target of [db, other, db]) {
      expect((await target.query(text, ['a'], { prepared: 'fixed' })).rows).toEqual([{ once: 1 }]);
    }
    expect(await preparedLike('%AS once%')).toBe(1);
  });

  it('waits for a transaction in progress, and sees only what it committed', async () => {
    const text = "SELECT id FROM item WHERE id LIKE 'tx%' ORDER BY id";
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedRow = new Promise<void>((resolve) => (inserted = resolve));
    const rolledBack = db
      .transaction(async (tx) => {
        await tx.query("INSERT INTO item (id) VALUES ('tx-rolled-back')");
        inserted();
        await gate;
        throw new Error('roll back');
      })
      .catch(() => 'rolled back');
    await insertedRow;
    let answered = false;
    const read = db.query(text, [], { prepared: 'fixed' }).then((result) => {
      answered = true;
      return result.rows;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(answered).toBe(false);
    release();
    expect(await rolledBack).toBe('rolled back');
    expect(await read).toEqual([]);

    await db.transaction(async (tx) => {
      await tx.query("INSERT INTO item (id) VALUES ('tx-committed')");
    });
    expect((await db.query(text, [], { prepared: 'fixed' })).rows).toEqual([
      { id: 'tx-committed' },
    ]);
  });

  it("runs inside a transaction's own work: sees its writes, and is rolled back with it", async () => {
    const select = "SELECT id FROM item WHERE id LIKE 'own%' ORDER BY id";
    const insert = 'INSERT INTO item (id) VALUES ($1) RETURNING id';
    const outcome = await db
      .transaction(async (tx) => {
        await tx.query("INSERT INTO item (id) VALUES ('own-plain')");
        const added = await tx.query(insert, ['own-prepared'], { prepared: 'fixed' });
        expect(added.rows).toEqual([{ id: 'own-prepared' }]);
        const seen = await tx.query(select, [], { prepared: 'fixed' });
        expect(seen.rows).toEqual([{ id: 'own-plain' }, { id: 'own-prepared' }]);
        throw new Error('roll back');
      })
      .catch((error: Error) => error.message);
    expect(outcome).toBe('roll back');
    expect((await db.query(select, [], { prepared: 'fixed' })).rows).toEqual([]);

    await db.transaction(async (tx) => {
      await tx.query(insert, ['own-committed'], { prepared: 'fixed' });
    });
    expect((await db.query(select, [], { prepared: 'fixed' })).rows).toEqual([
      { id: 'own-committed' },
    ]);
    expect(await preparedLike('INSERT INTO item (id) VALUES%')).toBe(1);
  });

  it('refuses as query() does once the PGlite is closed', async () => {
    const closing = await openDatabase({ pglite: await PGlite.create() });
    await closing.query('SELECT 1 AS open', [], { prepared: 'fixed' });
    await closing.close();
    const plain = await closing.query('SELECT 1 AS open').catch((error: Error) => error.message);
    const prepared = await closing
      .query('SELECT 1 AS open', [], { prepared: 'fixed' })
      .catch((error: Error) => error.message);
    expect(prepared).toBe(plain);
    expect(prepared).toBe('PGlite is closed');
  });

  it('reports errors as query() does, and the statement still runs afterwards', async () => {
    const text = 'SELECT $1::bigint + 1 AS next';
    const plain = await pglite.query(text, ['not a number']).catch((error: unknown) => error);
    const prepared = await db
      .query(text, ['not a number'], { prepared: 'fixed' })
      .catch((error: unknown) => error);
    expect((prepared as { code?: string }).code).toBe('22P02');
    expect((prepared as Error).message).toBe((plain as Error).message);
    expect((await db.query(text, [41], { prepared: 'fixed' })).rows).toEqual([{ next: 42 }]);

    const broken = 'SELEC 1 AS never';
    for (let run = 0; run < 2; run++) {
      const error = await db.query(broken, [], { prepared: 'fixed' }).catch((e: unknown) => e);
      expect((error as { code?: string }).code).toBe('42601');
    }
    expect(await preparedLike('%AS never%')).toBe(0);
    expect((await db.query('SELECT 1 AS alive', [], { prepared: 'fixed' })).rows).toEqual([
      { alive: 1 },
    ]);
  });
});

/**
 * One SQL dialect, two engines: embedded PostgreSQL (PGlite) in a data directory by default, or
 * a PostgreSQL server through `pg` when DATABASE_URL is set. Callers see only this interface.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

export interface Queryable {
  query<R = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
  ): Promise<{ rows: R[] }>;
}

export interface Database extends Queryable {
  readonly engine: 'pglite' | 'postgres';
  /** Runs `work` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Runs several statements separated by `;` (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

export type DatabaseTarget =
  { readonly url: string } | { readonly dataDir: string } | { readonly pglite: PGlite };

export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  if ('url' in target) return openPostgres(target.url);
  const db = 'pglite' in target ? target.pglite : await PGlite.create(target.dataDir);
  return wrapPGlite(db);
}

function wrapPGlite(db: PGlite): Database {
  const query = async <R>(text: string, values?: readonly unknown[]) => ({
    rows: (await db.query<R>(text, values as unknown[])).rows,
  });
  return {
    engine: 'pglite',
    query,
    // PGlite has one connection: its transaction() queues other work until this one ends.
    transaction: (work) =>
      db.transaction((tx) =>
        work({
          query: async <R>(text: string, values?: readonly unknown[]) => ({
            rows: (await tx.query<R>(text, values as unknown[])).rows,
          }),
        }),
      ),
    exec: async (sql) => {
      await db.exec(sql);
    },
    close: () => db.close(),
  };
}

function openPostgres(url: string): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
  });
  // An idle client's error (the server restarted) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return {
    engine: 'postgres',
    query: async <R>(text: string, values?: readonly unknown[]) => ({
      rows: (await pool.query(text, values as unknown[])).rows as R[],
    }),
    transaction: async (work) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work({
          query: async <R>(text: string, values?: readonly unknown[]) => ({
            rows: (await client.query(text, values as unknown[])).rows as R[],
          }),
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    exec: async (sql) => {
      await pool.query(sql);
    },
    close: () => pool.end(),
  };
}

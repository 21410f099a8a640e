/** A PostgreSQL server through `pg`: a pool of connections, shared by this process's requests. */
import pg from 'pg';
import type { Database, QueryOptions, Transaction } from './database.js';
import { TransactionEnd } from './database.js';
import { classified, classifyDatabaseError } from './database-errors.js';
import { postgresNotices } from './postgres-notices.js';
import { statementName } from './statement-names.js';

export interface PostgresOptions {
  readonly url: string;
  /**
   * The same database without a pooler, when `url` goes through one in transaction mode
   * (PgBouncer): each statement through `url` may then reach a different server session, so none
   * is kept prepared (a session's prepared statements are not the next one's), and what needs
   * one session throughout (LISTEN, the job queue) connects here instead.
   */
  readonly directUrl?: string;
  /** Connections in the pool; 10 when not given. */
  readonly poolSize?: number;
  /** How long to wait to connect, or for a free connection; 10 s when not given. */
  readonly connectTimeoutMs?: number;
  /** How long a connection may stay idle before it is closed; 10 minutes when not given. */
  readonly idleTimeoutMs?: number;
}

export function openPostgres({
  url,
  directUrl,
  poolSize = 10,
  connectTimeoutMs = 10_000,
  idleTimeoutMs = 600_000,
}: PostgresOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // A server that takes connections but never answers (a dead host behind a firewall that
    // drops packets) would hold every request forever: connecting, and waiting for a free
    // connection, give up after this long (503), and idle connections are probed.
    connectionTimeoutMillis: connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // pg closes a connection after 10 s idle by default. A new one is a new backend process,
    // with cold catalog caches and none of the prepared statements: the first requests of every
    // burst after a lull would pay for that.
    idleTimeoutMillis: idleTimeoutMs,
  });
  // An idle client's error (the server restarted) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const sessionUrl = directUrl ?? url;
  const notices = postgresNotices(pool, sessionUrl, connectTimeoutMs);
  const prepares = directUrl === undefined;
  return {
    engine: 'postgres',
    sessionUrl,
    notices,
    query: (text, values, options) =>
      rowsOf(pool, queryOf(text, values, prepares ? options?.prepared : undefined)),
    transaction: (work) => {
      const ended = new TransactionEnd();
      return ended.after(postgresTransaction(pool, work, ended.add, prepares));
    },
    exec: async (sql) => {
      await classified(pool.query(sql));
    },
    close: async () => {
      await notices.close();
      await pool.end();
    },
  };
}

async function rowsOf<R>(
  target: pg.Pool | pg.PoolClient,
  query: pg.QueryConfig,
): Promise<{ rows: R[] }> {
  return { rows: (await classified(target.query(query))).rows as R[] };
}

async function postgresTransaction<T>(
  pool: pg.Pool,
  work: (tx: Transaction) => Promise<T>,
  afterEnd: Transaction['afterEnd'],
  prepares: boolean,
): Promise<T> {
  const client = await classified(pool.connect());
  // A checked-out client has no listener of the pool's: without this one, a connection lost
  // between two statements of the transaction is an unhandled 'error' event, and the process
  // exits. The statement waiting on it fails anyway; `lost` tells the pool to discard it.
  let lost: Error | undefined;
  const onError = (error: Error) => {
    lost = error;
  };
  client.on('error', onError);
  try {
    await rowsOf(client, { text: 'BEGIN' });
    const result = await work({
      query: (text, values, options) =>
        rowsOf(client, queryOf(text, values, prepares ? options?.prepared : undefined)),
      afterEnd,
    });
    await rowsOf(client, { text: 'COMMIT' });
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw classifyDatabaseError(error);
  } finally {
    client.off('error', onError);
    client.release(lost);
  }
}

/** pg's query config: named (so kept prepared per connection) when `prepared` allows it. */
function queryOf(
  text: string,
  values: readonly unknown[] | undefined,
  prepared: QueryOptions['prepared'],
): pg.QueryConfig {
  const name = prepared === undefined ? undefined : statementName(text, prepared);
  return { text, values: values as unknown[], ...(name ? { name } : {}) };
}

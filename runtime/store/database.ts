/**
 * One SQL dialect, two engines: embedded PostgreSQL (PGlite) in a data directory by default, or
 * a PostgreSQL server through `pg` when DATABASE_URL is set. Callers see only this interface.
 */
import { createHash } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { runPrepared } from './pglite-statements.js';

export interface Queryable {
  query<R = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<{ rows: R[] }>;
}

export interface QueryOptions {
  /**
   * Keep the statement prepared on each PostgreSQL connection (or in PGlite's one session,
   * pglite-statements.ts), so that running it again skips parsing and planning (a search's
   * planning alone costs 0.3–0.5 ms on PostgreSQL, 1–3 ms on PGlite):
   * - `fixed`: the text is one of a small, fixed set the server runs again and again;
   * - `recurring`: the text is shaped by a client's request (a search, whose values are
   *   parameters; a write, by the index tables its resources fill): prepared from its
   *   RECURRING_AFTER-th run on, while fewer than MAX_RECURRING texts are. A prepared
   *   statement stays in its connection for good, so client-chosen shapes must not grow that
   *   set without end; past the bound (or run fewer times) texts are parsed and planned on
   *   every run, as before.
   * Both hold inside transactions too.
   */
  readonly prepared?: 'fixed' | 'recurring';
}

/** The statements of one transaction. */
export interface Transaction extends Queryable {
  /** Runs `listener` once the transaction has ended, committed or rolled back. */
  afterEnd(listener: () => void): void;
}

export interface Database extends Queryable {
  readonly engine: 'pglite' | 'postgres';
  /** Runs `work` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs several statements separated by `;` (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

export type DatabaseTarget =
  | {
      readonly url: string;
      /** Connections in the pool; 10 when not given. */
      readonly poolSize?: number;
      /** How long to wait to connect, or for a free connection; 10 s when not given. */
      readonly connectTimeoutMs?: number;
      /** How long a connection may stay idle before it is closed; 10 minutes when not given. */
      readonly idleTimeoutMs?: number;
    }
  | { readonly dataDir: string }
  | { readonly pglite: PGlite };

export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  if ('url' in target) return openPostgres(target);
  const db = 'pglite' in target ? target.pglite : await PGlite.create(target.dataDir);
  return wrapPGlite(db);
}

function wrapPGlite(db: PGlite): Database {
  /** Queries through `session` (PGlite itself, or a transaction's work inside it). */
  const queryIn =
    (session: Pick<PGlite, 'query'>, inTransaction: boolean): Queryable['query'] =>
    async <R>(text: string, values?: readonly unknown[], options?: QueryOptions) => {
      const name = options?.prepared && statementName(text, options.prepared);
      if (name) return { rows: await runPrepared<R>(db, name, text, values ?? [], inTransaction) };
      return { rows: (await session.query<R>(text, values as unknown[])).rows };
    };
  return {
    engine: 'pglite',
    query: queryIn(db, false),
    // PGlite has one connection: its transaction() queues other work until this one ends.
    transaction: (work) => {
      const ended = new TransactionEnd();
      return ended.after(
        db.transaction((tx) => work({ query: queryIn(tx, true), afterEnd: ended.add })),
      );
    },
    exec: async (sql) => {
      await db.exec(sql);
    },
    close: () => db.close(),
  };
}

/**
 * The database could not be reached, or dropped the connection: nothing is wrong with the
 * request, and the same request may succeed later (HTTP 503).
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`The database is not available: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
  }
}

/** SQLSTATEs of a server that is going away or not there yet: class 08, 57P01–57P03, 53300. */
const UNAVAILABLE_STATES = /^(08...|57P0[123]|53300)$/;
/** pg's own errors for a connection that is gone or never came (they carry no code). */
const CONNECTION_LOST =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Cannot use a pool after calling end)/;

/** `error` as a DatabaseUnavailableError when it says the server is out of reach; else as is. */
function unavailableOr(error: unknown): unknown {
  if (error instanceof DatabaseUnavailableError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const outOfReach =
    error instanceof pg.DatabaseError
      ? typeof code === 'string' && UNAVAILABLE_STATES.test(code)
      : // Socket errors (ECONNREFUSED, ECONNRESET, ENOTFOUND, …) and pg's connection errors.
        (typeof code === 'string' && /^E[A-Z_]+$/.test(code) && 'syscall' in (error as object)) ||
        CONNECTION_LOST.test((error as Error)?.message ?? '');
  return outOfReach ? new DatabaseUnavailableError(error) : error;
}

function reachable<T>(work: Promise<T>): Promise<T> {
  return work.catch((error: unknown) => Promise.reject(unavailableOr(error)));
}

function openPostgres({
  url,
  poolSize = 10,
  connectTimeoutMs = 10_000,
  idleTimeoutMs = 600_000,
}: Extract<DatabaseTarget, { url: string }>): Database {
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
    // burst after a lull paid for that. Bench Q1 at concurrency 16, run after the bench's
    // one-connection phase, two alternating pairs: 6,974–7,447 → 7,851–8,363 requests/s.
    idleTimeoutMillis: idleTimeoutMs,
  });
  // An idle client's error (the server restarted) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return {
    engine: 'postgres',
    query: (text, values, options) => rowsOf(pool, queryOf(text, values, options?.prepared)),
    transaction: (work) => {
      const ended = new TransactionEnd();
      return ended.after(postgresTransaction(pool, work, ended.add));
    },
    exec: async (sql) => {
      await reachable(pool.query(sql));
    },
    close: () => pool.end(),
  };
}

async function rowsOf<R>(
  target: pg.Pool | pg.PoolClient,
  query: pg.QueryConfig,
): Promise<{ rows: R[] }> {
  return { rows: (await reachable(target.query(query))).rows as R[] };
}

async function postgresTransaction<T>(
  pool: pg.Pool,
  work: (tx: Transaction) => Promise<T>,
  afterEnd: Transaction['afterEnd'],
): Promise<T> {
  const client = await reachable(pool.connect());
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
      query: (text, values, options) => rowsOf(client, queryOf(text, values, options?.prepared)),
      afterEnd,
    });
    await rowsOf(client, { text: 'COMMIT' });
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw unavailableOr(error);
  } finally {
    client.off('error', onError);
    client.release(lost);
  }
}

/** The listeners of one transaction's end, run whether it committed or rolled back. */
class TransactionEnd {
  private readonly listeners: (() => void)[] = [];
  readonly add = (listener: () => void): void => {
    this.listeners.push(listener);
  };

  async after<T>(transaction: Promise<T>): Promise<T> {
    try {
      return await transaction;
    } finally {
      for (const listener of this.listeners) listener();
    }
  }
}

/** Recurring texts kept prepared at most; each connection prepares those it runs. */
export const MAX_RECURRING = 200;
/** Runs of a recurring text before it is prepared: one-off shapes are never kept. */
export const RECURRING_AFTER = 3;
/** Recurring texts not (yet) prepared, with their runs so far: at most this many are counted. */
const MAX_COUNTED = 1000;

const statementNames = new Map<string, string>();
const recurringRuns = new Map<string, number>();
let recurringPrepared = 0;

/** pg's query config: named (so kept prepared per connection) when `prepared` allows it. */
function queryOf(
  text: string,
  values: readonly unknown[] | undefined,
  prepared: QueryOptions['prepared'],
): pg.QueryConfig {
  const name = prepared === undefined ? undefined : statementName(text, prepared);
  return { text, values: values as unknown[], ...(name ? { name } : {}) };
}

/** A prepared statement's name, the same for the same text on every connection. */
function statementName(text: string, kind: 'fixed' | 'recurring'): string | undefined {
  const known = statementNames.get(text);
  if (known) return known;
  if (kind === 'recurring') {
    if (recurringPrepared >= MAX_RECURRING) return undefined;
    const runs = (recurringRuns.get(text) ?? 0) + 1;
    if (runs < RECURRING_AFTER) {
      if (recurringRuns.size >= MAX_COUNTED) recurringRuns.clear();
      recurringRuns.set(text, runs);
      return undefined;
    }
    recurringRuns.delete(text);
    recurringPrepared++;
  }
  const name = `graphir_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
  statementNames.set(text, name);
  return name;
}

/**
 * One SQL dialect, two engines: embedded PostgreSQL (PGlite) in a data directory by default, or
 * a PostgreSQL server through `pg` when DATABASE_URL is set (open-database.ts picks one). Callers
 * see only these interfaces.
 */

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
   * pglite-statements.ts), so that running it again skips parsing and planning (for a search,
   * often more than running it):
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

/**
 * Hearing what other processes on the database change, so that what this one keeps in memory
 * (a client's liveness, a project's secrets) is dropped when it changes anywhere.
 */
export interface Notices {
  /**
   * Tells every process on the database, this one included, `payload` on `channel`. Resolves
   * once the database has taken it: other processes hear it as soon as it is delivered.
   */
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Calls `listener` with each payload sent on `channel`, from any process; with `undefined` when
   * some may have been missed (the connection that hears them was lost and is back), so that
   * the listener drops everything it keeps.
   */
  listen(channel: string, listener: (payload: string | undefined) => void): void;
  /** Whether notices from other processes reach this one now; while not, keep nothing. */
  readonly hearing: boolean;
}

export interface Database extends Queryable {
  readonly engine: 'pglite' | 'postgres';
  /**
   * PostgreSQL: where connections that need a session of their own connect (the job queue's
   * LISTEN and liveness): the server itself, past any pooler in transaction mode.
   */
  readonly sessionUrl?: string;
  readonly notices: Notices;
  /** Runs `work` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs several statements separated by `;` (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}

/** The listeners of one transaction's end, run whether it committed or rolled back. */
export class TransactionEnd {
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

/** Resolves when the database answers a trivial statement. */
export async function databaseAnswers(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}

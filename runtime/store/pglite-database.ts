/**
 * The embedded engine: PGlite, in this process, with one session. Only this process opens it,
 * so notices go from this process to itself.
 */
import type { PGlite } from '@electric-sql/pglite';
import { EventEmitter } from 'node:events';
import type { Database, Notices, QueryOptions, Queryable } from './database.js';
import { TransactionEnd } from './database.js';
import { classified } from './database-errors.js';
import { runPrepared } from './pglite-statements.js';
import { statementName } from './statement-names.js';

export function pgliteDatabase(db: PGlite): Database {
  /** Queries through `session` (PGlite itself, or a transaction's work inside it). */
  const queryIn =
    (session: Pick<PGlite, 'query'>, inTransaction: boolean): Queryable['query'] =>
    async <R>(text: string, values?: readonly unknown[], options?: QueryOptions) => {
      const name = options?.prepared && statementName(text, options.prepared);
      if (name)
        return {
          rows: await classified(runPrepared<R>(db, name, text, values ?? [], inTransaction)),
        };
      return { rows: (await classified(session.query<R>(text, values as unknown[]))).rows };
    };
  return {
    engine: 'pglite',
    notices: inProcessNotices(),
    query: queryIn(db, false),
    // PGlite has one connection: its transaction() queues other work until this one ends.
    transaction: (work) => {
      const ended = new TransactionEnd();
      return ended.after(
        db.transaction((tx) => work({ query: queryIn(tx, true), afterEnd: ended.add })),
      );
    },
    exec: async (sql) => {
      await classified(db.exec(sql));
    },
    close: () => db.close(),
  };
}

function inProcessNotices(): Notices {
  const channels = new EventEmitter();
  channels.setMaxListeners(0);
  return {
    hearing: true,
    notify: async (channel, payload) => {
      channels.emit(channel, payload);
    },
    listen: (channel, listener) => {
      channels.on(channel, listener);
    },
  };
}

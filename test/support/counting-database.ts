/** The same database, telling `count` the text of every statement sent to it (in transactions too). */
import type { Database, Queryable } from '../../runtime/store/database.js';

export function countingDatabase(db: Database, count: (text: string) => void): Database {
  const wrap = (q: Queryable): Queryable => ({
    query: (text, values, options) => (count(text), q.query(text, values, options)),
  });
  return {
    ...db,
    ...wrap(db),
    transaction: (work) => db.transaction((tx) => work({ ...wrap(tx), afterEnd: tx.afterEnd })),
    exec: db.exec,
    close: db.close,
  };
}

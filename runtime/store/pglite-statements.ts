/**
 * Named prepared statements on PGlite, which its `query()` does not offer. `query()` sends each
 * statement as six separate calls into the WebAssembly module (parse, describe, bind, describe,
 * execute, sync) and parses and plans the text every time. Here a statement is parsed and
 * described once per PGlite instance; each run then is one call (bind, execute, sync) of a plan
 * PostgreSQL may keep: reads and searches take about half the time (`npm run bench:statements`).
 *
 * Values and rows go through PGlite's own serializers and parsers, chosen by the types
 * PostgreSQL describes, so results are those `query()` returns.
 */
import type { PGlite } from '@electric-sql/pglite';
import { serialize } from 'pg-protocol';
import { Parser } from 'pg-protocol/dist/parser.js';

interface Described {
  readonly paramTypes: readonly number[];
  readonly fields: readonly { readonly name: string; readonly dataTypeID: number }[];
}

/** The statements each PGlite instance has prepared, by name: prepared statements are per session. */
const preparedIn = new WeakMap<PGlite, Map<string, Described>>();

/**
 * Runs `text` as the statement `name`, preparing it on first use. Takes PGlite's locks as
 * `query()` does: a transaction in progress finishes first, since its statements and these share
 * PGlite's one session. `inTransaction`: run by that transaction's own work, which holds the
 * transaction lock already (as its `tx.query()` does, only the query lock is taken).
 */
export function runPrepared<R>(
  db: PGlite,
  name: string,
  text: string,
  values: readonly unknown[],
  inTransaction = false,
): Promise<R[]> {
  const run = () =>
    db._runExclusiveQuery(async () => {
      // As query() says it: a closed PGlite's module is gone, and using it fails obscurely.
      if (db.closed) throw new Error('PGlite is closed');
      let prepared = preparedIn.get(db);
      if (!prepared) preparedIn.set(db, (prepared = new Map()));
      let described = prepared.get(name);
      if (!described) {
        described = await prepare(db, name, text);
        prepared.set(name, described);
      }
      return execute<R>(db, name, described, values);
    });
  return inTransaction ? run() : db._runExclusiveTransaction(run);
}

async function prepare(db: PGlite, name: string, text: string): Promise<Described> {
  const { messages } = await db.execProtocol(
    Buffer.concat([
      serialize.parse({ name, text }),
      serialize.describe({ type: 'S', name }),
      serialize.sync(),
    ]),
    { syncToFs: false },
  );
  let paramTypes: readonly number[] = [];
  let fields: Described['fields'] = [];
  for (const message of messages) {
    if (message.name === 'parameterDescription') {
      paramTypes = (message as unknown as { dataTypeIDs: number[] }).dataTypeIDs;
    } else if (message.name === 'rowDescription') {
      fields = (message as unknown as { fields: Described['fields'] }).fields;
    }
  }
  return { paramTypes, fields };
}

async function execute<R>(
  db: PGlite,
  name: string,
  { paramTypes, fields }: Described,
  values: readonly unknown[],
): Promise<R[]> {
  const texts = values.map((value, index) => {
    if (value === null || value === undefined) return null;
    const serializer = db.serializers[paramTypes[index]];
    return serializer ? serializer(value) : String(value);
  });
  const parsers = fields.map((field) => db.parsers[field.dataTypeID]);
  const rows: R[] = [];
  let failure: unknown;
  const parser = new Parser();
  // The raw replies, parsed by pg-protocol's parser: PGlite's own (execProtocol) copies every
  // value into a new ArrayBuffer and keeps a copy of all replies besides, a large share of a
  // big search's time.
  await db.execProtocolRawStream(
    Buffer.concat([
      serialize.bind({ statement: name, values: texts }),
      serialize.execute({}),
      serialize.sync(),
    ]),
    {
      onRawData: (chunk) =>
        // A view of PGlite's WebAssembly memory, which the next reply overwrites: copied.
        parser.parse(Buffer.from(chunk), (message) => {
          if (message.name === 'dataRow') {
            const cells = (message as unknown as { fields: (string | null)[] }).fields;
            const row: Record<string, unknown> = {};
            fields.forEach((field, index) => {
              const cell = cells[index];
              const parse = parsers[index];
              row[field.name] = cell === null ? null : parse ? parse(cell, field.dataTypeID) : cell;
            });
            rows.push(row as R);
          } else if (message.name === 'error') {
            failure ??= message;
          }
        }),
    },
  );
  if (failure) throw failure;
  return rows;
}

/**
 * A PostgreSQL address that takes connections and never answers (a dead host behind a firewall
 * that drops packets looks like this to a client): statements fail as "database unavailable"
 * (503 over HTTP) after DATABASE_CONNECT_TIMEOUT_MS, rather than waiting for ever.
 */
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DatabaseUnavailableError } from '../../runtime/store/database-errors.js';
import { openDatabase } from '../../runtime/store/open-database.js';

const TIMEOUT_MS = 300;
let silent: Server;
const sockets: Socket[] = [];

beforeAll(async () => {
  silent = createServer((socket) => void sockets.push(socket));
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
});
afterAll(() => {
  for (const socket of sockets) socket.destroy();
  silent.close();
});

it('gives up connecting after DATABASE_CONNECT_TIMEOUT_MS, as the database being unavailable', async () => {
  const { port } = silent.address() as { port: number };
  const db = await openDatabase({
    url: `postgres://nobody@127.0.0.1:${port}/none`,
    connectTimeoutMs: TIMEOUT_MS,
  });
  try {
    const started = performance.now();
    const results = await Promise.allSettled([db.query('SELECT 1'), db.query('SELECT 2')]);
    const took = performance.now() - started;
    for (const result of results) {
      expect(result.status).toBe('rejected');
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(DatabaseUnavailableError);
    }
    expect(sockets.length).toBeGreaterThan(0);
    // It waited for the connection as long as it was told to; had it waited forever, the test's
    // own time limit would fail it.
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
  } finally {
    await db.close();
  }
});

/**
 * Notices between the processes on one PostgreSQL database: NOTIFY to send, and one connection of
 * this process's own (outside the pool, which hands connections to whoever asks) that LISTENs on
 * every channel a listener asked for. While that connection is lost nothing is heard: `hearing`
 * is false, and once it is back every listener is told that notices may have been missed.
 * @see https://www.postgresql.org/docs/current/sql-notify.html
 */
import pg from 'pg';
import type { Notices } from './database.js';
import { classified } from './database-errors.js';

/** How long to wait before connecting again after the listening connection was lost. */
const RECONNECT_MS = 1_000;

export interface PostgresNotices extends Notices {
  close(): Promise<void>;
}

export function postgresNotices(
  pool: pg.Pool,
  url: string,
  connectTimeoutMs: number,
): PostgresNotices {
  const listeners = new Map<string, ((payload: string | undefined) => void)[]>();
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let hearing = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const lost = () => {
    hearing = false;
    client = undefined;
    if (!closed && listeners.size > 0) retry ??= setTimeout(reconnect, RECONNECT_MS);
  };
  const reconnect = () => {
    retry = undefined;
    connecting ??= connect().finally(() => (connecting = undefined));
  };
  const connect = async () => {
    const next = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: connectTimeoutMs,
    });
    next.on('error', () => {});
    next.on('end', () => {
      if (client === next) lost();
    });
    next.on('notification', ({ channel, payload }) => {
      for (const listener of listeners.get(channel) ?? []) listener(payload ?? '');
    });
    try {
      await next.connect();
      for (const channel of listeners.keys()) await next.query(`LISTEN ${identifier(channel)}`);
    } catch {
      await next.end().catch(() => {});
      lost();
      return;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    const wasHearing = hearing;
    hearing = true;
    // What was sent while nobody listened is gone: every listener starts afresh.
    if (!wasHearing)
      for (const list of listeners.values()) for (const listener of list) listener(undefined);
  };

  return {
    get hearing() {
      return hearing;
    },
    notify: async (channel, payload) => {
      await classified(pool.query('SELECT pg_notify($1, $2)', [channel, payload]));
    },
    listen: (channel, listener) => {
      const list = listeners.get(channel);
      if (list) {
        list.push(listener);
        return;
      }
      listeners.set(channel, [listener]);
      if (client) void client.query(`LISTEN ${identifier(channel)}`).catch(() => client?.end());
      else reconnect();
    },
    close: async () => {
      closed = true;
      clearTimeout(retry);
      await connecting;
      const last = client;
      client = undefined;
      hearing = false;
      await last?.end().catch(() => {});
    },
  };
}

/** Channel names are ours (`graphir_…`); quoted all the same. */
function identifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

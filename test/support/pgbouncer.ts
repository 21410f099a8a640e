/**
 * A PgBouncer of the test's own, in transaction pooling mode, in front of the test PostgreSQL
 * server: Debian's `pgbouncer` package (.ci/run installs it). It listens on a free port of
 * 127.0.0.1 and takes any database of that server, with trust authentication.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, chmodSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Where Debian puts it: /usr/sbin, not on every user's PATH. */
const CANDIDATES = [
  ...(process.env.PATH ?? '').split(':').map((dir) => join(dir, 'pgbouncer')),
  '/usr/sbin/pgbouncer',
];

/** The pgbouncer binary, or undefined when it is not installed. */
export function pgbouncerBinary(): string | undefined {
  return CANDIDATES.find((path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export interface Pgbouncer {
  /** `databaseUrl` with PgBouncer's host and port in place of the server's. */
  through(databaseUrl: string): string;
  /** Transactions PgBouncer has passed to `database` so far (its admin console's SHOW STATS). */
  transactions(database: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startPgbouncer(binary: string, serverUrl: string): Promise<Pgbouncer> {
  const server = new URL(serverUrl);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'graphir-pgbouncer-'));
  // PgBouncer refuses to run as root; as root it is started as the postgres user, who reads these.
  chmodSync(dir, 0o755);
  const userlist = join(dir, 'userlist.txt');
  writeFileSync(userlist, `"${user}" ""\n`, { mode: 0o644 });
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${userlist}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      'max_client_conn = 1000',
      'default_pool_size = 20',
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const child = spawn(binary, [...(asRoot ? ['-u', 'postgres'] : []), ini], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (chunk) => (log += String(chunk)));
  await listening(child, () => log);
  const through = (databaseUrl: string) => {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    return url.toString();
  };
  return {
    through,
    transactions: async (database) => {
      // The admin console speaks the simple query protocol only: a query without parameters.
      const adminConsole = new URL(through(serverUrl));
      adminConsole.pathname = '/pgbouncer';
      const admin = new pg.Client({ connectionString: adminConsole.toString() });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ database: string; total_xact_count: string }>(
          'SHOW STATS',
        );
        return Number(rows.find((row) => row.database === database)?.total_xact_count ?? 0);
      } finally {
        await admin.end();
      }
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function listening(child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!/LOG listening on 127\.0\.0\.1/.test(log())) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`pgbouncer did not start: ${log()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

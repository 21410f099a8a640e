/**
 * A PostgreSQL cluster of a test's own, in a temporary directory on a free port, that the test
 * may stop and start at will (the shared server on 5432 must never be touched). initdb refuses
 * to run as root, so as root the cluster runs as the `postgres` user through runuser.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const INSTALLS = '/usr/lib/postgresql';

export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  /** `pg_ctl stop -m <mode>`: `immediate` is a crash, `fast` disconnects clients and shuts down. */
  stop(mode: 'immediate' | 'fast'): Promise<void>;
  /** Starts it again on the same port and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops it if running and deletes its directory. */
  destroy(): Promise<void>;
  /** The server's log so far. */
  log(): string;
}

interface Setup {
  readonly bin: string;
  /** uid and gid to run as (root cannot run initdb); undefined: as this process's user. */
  readonly user?: { uid: number; gid: number };
}

/** Why no private cluster can be made here, or undefined when one can. */
export function privatePostgresUnavailable(): string | undefined {
  const found = setup();
  return typeof found === 'string' ? found : undefined;
}

function setup(): Setup | string {
  if (!existsSync(INSTALLS)) return `no PostgreSQL binaries under ${INSTALLS}`;
  const version = readdirSync(INSTALLS)
    .filter((name) => ['initdb', 'pg_ctl'].every((b) => existsSync(join(INSTALLS, name, 'bin', b))))
    .sort((a, b) => Number(b) - Number(a))[0];
  if (!version) return `no initdb and pg_ctl under ${INSTALLS}/*/bin`;
  const bin = join(INSTALLS, version, 'bin');
  if (process.getuid?.() !== 0) return { bin };
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === 'postgres');
  if (!entry) return 'running as root, and there is no postgres user to run initdb as';
  try {
    execFileSync('runuser', ['--help'], { stdio: 'ignore' });
  } catch {
    return 'running as root, and runuser (to run initdb as postgres) is missing';
  }
  return { bin, user: { uid: Number(entry[2]), gid: Number(entry[3]) } };
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const found = setup();
  if (typeof found === 'string') throw new Error(found);
  const { bin, user } = found;
  const dir = mkdtempSync(join(tmpdir(), 'graphir-pg-'));
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const port = await freePort();
  const as = (command: string, args: string[]) =>
    user
      ? run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args])
      : run(join(bin, command), args);
  await as('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-sync',
    '--encoding=UTF8',
    '--locale=C',
  ]);
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c max_connections=40',
  ].join(' ');
  let running = false;
  const start = async () => {
    await as('pg_ctl', ['-D', data, '-l', logFile, '-o', options, '-w', '-t', '30', 'start']);
    running = true;
  };
  const stop = async (mode: 'immediate' | 'fast') => {
    await as('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
    running = false;
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop,
    start,
    destroy: async () => {
      if (running) await stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Graphir as a real child process (`node --import tsx runtime/main.ts`, or the `graphir` command
 * with arguments), for tests that kill it, restart it or take its database away: its URL comes
 * from the line it prints when listening, and everything it writes on stdout is kept
 * (LOG_LEVEL=error: internal errors as JSON lines, each written as it is logged, so that
 * `output()` holds it at once). One server process unless the test asks for more.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type Engine } from '../support/test-databases.js';

export const ROOT = { id: 'reliability-root', secret: 'reliability-root-secret' };

export interface ServerProcess {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout so far. */
  output(): string;
  /** Resolves with the exit code or signal once the process has exited. */
  readonly exited: Promise<number | NodeJS.Signals>;
  kill(signal: NodeJS.Signals): Promise<number | NodeJS.Signals>;
}

/** Where server processes keep their data, for their environment, and its removal afterwards. */
export interface ProcessStorage {
  readonly env: NodeJS.ProcessEnv;
  remove(): Promise<void>;
}

/** A fresh data folder on PGlite, a fresh test database on PostgreSQL. */
export async function processStorage(engine: Engine): Promise<ProcessStorage> {
  if (engine === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'graphir-process-'));
    return {
      env: { DATA_DIR: dataDir, DATABASE_URL: '' },
      remove: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const database = await createTestDatabase('postgres');
  return { env: { DATABASE_URL: database.url }, remove: () => database.drop() };
}

/** `cliArgs`: run `graphir <cliArgs>` (`['serve', '--processes', '2']`) instead of `npm start`'s main. */
export async function startServerProcess(
  env: NodeJS.ProcessEnv,
  cliArgs?: readonly string[],
): Promise<ServerProcess> {
  const entry = cliArgs ? ['runtime/cli/main.ts', ...cliArgs] : ['runtime/main.ts'];
  const child = spawn(process.execPath, ['--import', 'tsx', ...entry], {
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      LOG_BUFFER_BYTES: '0',
      GRAPHIR_ROOT_CLIENT_ID: ROOT.id,
      GRAPHIR_ROOT_CLIENT_SECRET: ROOT.secret,
      GRAPHIR_PROCESSES: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit').then(([code, signal]) => (signal ?? code) as number);
  let output = '';
  // Read stdout to its end, so the child never blocks on a full pipe.
  const url = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += String(chunk);
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]);
    });
    void exited.then((how) =>
      reject(new Error(`the server exited (${how}) before listening: ${output}`)),
    );
  });
  return {
    url: await url,
    child,
    output: () => output,
    exited,
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

export async function token(url: string, clientId: string, clientSecret: string): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  });
  const response = await fetch(`${url}/oauth2/token`, { method: 'POST', body: form });
  const json = (await response.json()) as { access_token?: string };
  if (!json.access_token) throw new Error(`token refused: ${JSON.stringify(json)}`);
  return json.access_token;
}

/** A new project through the root client; its full-access client's id, secret and token. */
export async function createProject(
  url: string,
  name: string,
): Promise<{ clientId: string; clientSecret: string; token: string }> {
  const response = await fetch(`${url}/admin/projects`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Authorization: `Bearer ${await token(url, ROOT.id, ROOT.secret)}`,
    },
    body: JSON.stringify({ name }),
  });
  if (response.status !== 201) throw new Error(`project refused: ${await response.text()}`);
  const { clientId, clientSecret } = (await response.json()) as {
    clientId: string;
    clientSecret: string;
  };
  return { clientId, clientSecret, token: await token(url, clientId, clientSecret) };
}

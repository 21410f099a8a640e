/**
 * What every probe family (bench/probes.ts) shares: servers run as `npm start` runs them (from
 * this checkout's build, or `--root <checkout>`'s), tenants on them, and the measures of harm —
 * how long `/healthz` stalled during an attack, and the server's heap after a full collection.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { clientToken } from './bench-server.js';
import {
  collectGarbage,
  serverMemory,
  spawnServer,
  type ServerProcess,
} from './server-processes.js';

const ROOT = { id: 'probe-root', secret: 'probe-root-secret' };
const rootIndex = process.argv.indexOf('--root');
export const checkout = rootIndex > 0 ? resolve(process.argv[rootIndex + 1]) : undefined;
const MB = 1024 * 1024;
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;
export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

export interface Tenant {
  readonly projectId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly token: string;
}

export interface Server extends ServerProcess {
  readonly root: string;
  project(name: string): Promise<Tenant>;
}

export async function start(env: Record<string, string> = {}): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'graphir-probe-'));
  const process = await spawnServer(
    'dist',
    {
      GRAPHIR_ROOT_CLIENT_ID: ROOT.id,
      GRAPHIR_ROOT_CLIENT_SECRET: ROOT.secret,
      LOG_LEVEL: 'warn',
      ...('DATABASE_URL' in env ? {} : { DATA_DIR: join(dir, 'data') }),
      ...env,
    },
    join(dir, 'server.log'),
    { gc: true, ...(checkout ? { root: checkout } : {}) },
  );
  const root = await clientToken(process.url, ROOT.id, ROOT.secret);
  return {
    ...process,
    root,
    project: async (name) => {
      const created = await json(
        await fetch(`${process.url}/admin/projects`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${root}` },
          body: JSON.stringify({ name }),
        }),
      );
      return {
        ...created,
        token: await clientToken(process.url, created.clientId, created.clientSecret),
      };
    },
  };
}

export async function json(response: Response): Promise<any> {
  const text = await response.text();
  if (!response.ok && response.status >= 500) throw new Error(`${response.status}: ${text}`);
  return JSON.parse(text);
}

export const fhir = (server: ServerProcess, token: string, path: string, init: RequestInit = {}) =>
  fetch(`${server.url}/fhir/R4${path}`, {
    ...init,
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/fhir+json',
      ...init.headers,
    },
  });

export const graphql = (server: ServerProcess, token: string, query: string) =>
  fhir(server, token, '/$graphql', {
    method: 'POST',
    body: JSON.stringify({ query }),
    headers: { 'Content-Type': 'application/json' },
  });

/** Runs `attack` while timing `GET /healthz` every 50 ms: the longest it took, in ms. */
export async function stallDuring(
  server: ServerProcess,
  attack: () => Promise<unknown>,
): Promise<number> {
  let longest = 0;
  let running = true;
  const watch = (async () => {
    while (running) {
      const started = performance.now();
      await fetch(`${server.url}/healthz`).catch(() => undefined);
      longest = Math.max(longest, performance.now() - started);
      await sleep(50);
    }
  })();
  try {
    await attack();
  } finally {
    running = false;
    await watch;
  }
  return longest;
}

export async function heapMb(server: ServerProcess): Promise<number> {
  await collectGarbage(server);
  return ((await serverMemory(server)).heapUsed ?? NaN) / MB;
}

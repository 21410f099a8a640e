/**
 * One Graphir server for a latency bench, as `npm start` runs it (`node dist/runtime/main.js`,
 * built first) in a process of its own, on fresh storage: PGlite in a temporary DATA_DIR, or a
 * fresh database on the local PostgreSQL server. A project is made through the admin API, and
 * `fhir()` calls the FHIR API with its token. The bench's own process only sends requests.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, type Engine } from '../test/support/test-databases.js';
import { spawnServer } from './server-processes.js';

export const ROOT = { id: 'bench-root', secret: 'bench-root-secret' };

export interface BenchServer {
  readonly url: string;
  readonly pid: number;
  /** A token of the bench project's client. */
  readonly token: string;
  /** fetch relative to the FHIR base, with FHIR JSON bodies and the token. */
  fhir(
    path: string,
    init?: { method?: string; body?: unknown; contentType?: string },
  ): Promise<BenchResponse>;
  stop(): Promise<void>;
}

/** Bench code reads FHIR JSON of many shapes: `json()` is untyped here on purpose. */
export type BenchResponse = Omit<Response, 'json'> & { json(): Promise<any> };

let built = false;

/** Builds dist/ once per bench run. */
export function buildOnce(): void {
  if (built) return;
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  built = true;
}

/** `root`: another checkout whose dist/ is built (a version to compare with); by default this one. */
export async function startBenchServer(
  engine: Engine,
  env: Record<string, string> = {},
  root?: string,
): Promise<BenchServer> {
  if (!root) buildOnce();
  const dir = mkdtempSync(join(tmpdir(), 'graphir-bench-'));
  const database = engine === 'postgres' ? await createTestDatabase('postgres') : undefined;
  const server = await spawnServer(
    'dist',
    {
      GRAPHIR_ROOT_CLIENT_ID: ROOT.id,
      GRAPHIR_ROOT_CLIENT_SECRET: ROOT.secret,
      ...(database ? { DATABASE_URL: database.url! } : { DATA_DIR: join(dir, 'data') }),
      ...env,
    },
    join(dir, 'server.log'),
    root ? { root } : {},
  );
  try {
    const root = await clientToken(server.url, ROOT.id, ROOT.secret);
    const token = await projectToken(server.url, root, 'Bench');
    return {
      url: server.url,
      pid: server.pid,
      token,
      fhir: (path, init = {}) =>
        fetch(`${server.url}/fhir/R4${path}`, {
          method: init.method ?? 'GET',
          headers: {
            Authorization: `Bearer ${token}`,
            ...(init.body === undefined
              ? {}
              : { 'Content-Type': init.contentType ?? 'application/fhir+json' }),
          },
          body:
            init.body === undefined || typeof init.body === 'string'
              ? (init.body as string | undefined)
              : JSON.stringify(init.body),
        }),
      stop: async () => {
        await server.stop();
        await database?.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await server.stop();
    await database?.drop();
    throw error;
  }
}

/** A new project made through the admin API with the root's token; a token of its client. */
export async function projectToken(url: string, rootToken: string, name: string): Promise<string> {
  const created = await checked(
    await fetch(`${url}/admin/projects`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${rootToken}` },
      body: JSON.stringify({ name }),
    }),
  );
  const { clientId, clientSecret } = (await created.json()) as {
    clientId: string;
    clientSecret: string;
  };
  return clientToken(url, clientId, clientSecret);
}

/** A token by client credentials. */
export async function clientToken(url: string, clientId: string, secret: string): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: secret,
  });
  const response = await checked(
    await fetch(`${url}/oauth2/token`, { method: 'POST', body: form }),
  );
  return ((await response.json()) as { access_token: string }).access_token;
}

async function checked(response: Response): Promise<Response> {
  if (!response.ok)
    throw new Error(`${response.url} → ${response.status}: ${await response.text()}`);
  return response;
}

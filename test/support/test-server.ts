/**
 * A real Graphir server on a free port, over a test database, for tests that speak HTTP. It
 * starts with a known root client and makes one project whose token `fhir()` sends.
 */
import { afterAll, beforeAll } from 'vitest';
import { loadConfig, type Config } from '../../runtime/server/config.js';
import { startServer, type RunningServer } from '../../runtime/server/server.js';
import { openDatabase } from '../../runtime/store/open-database.js';
import { createTestDatabase, type Engine, type TestDatabase } from './test-databases.js';

export const ROOT_CLIENT = { id: 'test-root', secret: 'test-root-secret' };

/** Test code reads FHIR JSON of many shapes: `json()` is untyped here on purpose. */
export type FhirResponse = Omit<Response, 'json'> & { json(): Promise<any> };

export interface RequestInit {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Defaults to the test project's token; `null` sends none. */
  token?: string | null;
}

/** A FHIR call as `fhir()` of a TestServer or a PeerServer makes it: what racing tests send through. */
export type FhirSend = (path: string, init?: RequestInit) => Promise<FhirResponse>;

export interface Project {
  readonly projectId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly token: string;
}

export interface TestServer extends RunningServer {
  readonly base: string;
  readonly database: TestDatabase;
  /** The project `fhir()` works in. */
  readonly project: Project;
  rootToken(): Promise<string>;
  /** A new project through the admin API, with a token of its first client. */
  createProject(name?: string): Promise<Project>;
  /** A token by client credentials; throws when the server refuses. */
  token(clientId: string, clientSecret: string, scope?: string): Promise<string>;
  /** fetch relative to the FHIR base, with FHIR JSON bodies and a bearer token. */
  fhir(path: string, init?: RequestInit): Promise<FhirResponse>;
  /** fetch relative to the server root (admin API, /oauth2/token), JSON bodies. */
  call(path: string, init?: RequestInit): Promise<FhirResponse>;
  stop(): Promise<void>;
}

/** `database`: one the caller opened (benchmarks use PGlite on disk); by default a fresh test database. */
export async function startTestServer(
  engine: Engine,
  env: NodeJS.ProcessEnv = {},
  database?: TestDatabase,
): Promise<TestServer> {
  database ??= await createTestDatabase(engine);
  const config: Config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    GRAPHIR_ROOT_CLIENT_ID: ROOT_CLIENT.id,
    GRAPHIR_ROOT_CLIENT_SECRET: ROOT_CLIENT.secret,
    // One process: the defaults that depend on how many (bot workers) are one process's.
    GRAPHIR_PROCESSES: '1',
    // The job queue on PostgreSQL opens connections of its own (runtime/jobs/graphile-queue.ts).
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...env,
  });
  const server = await startServer(config, { db: database.db });
  const base = `${server.url}/fhir/R4`;

  const token = async (clientId: string, clientSecret: string, scope?: string) => {
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
      ...(scope ? { scope } : {}),
    });
    const response = await fetch(`${server.url}/oauth2/token`, { method: 'POST', body });
    const json = (await response.json()) as { access_token?: string };
    if (response.status !== 200 || !json.access_token)
      throw new Error(`token refused: ${response.status} ${JSON.stringify(json)}`);
    return json.access_token;
  };
  const rootToken = () => token(ROOT_CLIENT.id, ROOT_CLIENT.secret);
  const createProject = async (name = 'Test project') => {
    const response = await send(
      `${server.url}/admin/projects`,
      { method: 'POST', body: { name } },
      'application/json',
      await rootToken(),
    );
    if (response.status !== 201)
      throw new Error(`project refused: ${response.status} ${await response.text()}`);
    const created = (await response.json()) as Omit<Project, 'token'>;
    return { ...created, token: await token(created.clientId, created.clientSecret) };
  };
  const project = await createProject();

  return {
    ...server,
    base,
    database: database!,
    project,
    rootToken,
    createProject,
    token,
    fhir: (path, init = {}) =>
      send(
        `${base}${path}`,
        init,
        'application/fhir+json',
        init.token === undefined ? project.token : init.token,
      ),
    call: (path, init = {}) =>
      send(`${server.url}${path}`, init, 'application/json', init.token ?? undefined),
    stop: async () => {
      await server.close();
      await database!.drop();
    },
  };
}

/**
 * A second server on the same PostgreSQL database as `first`, as another process behind the same
 * public address would be: `first`'s URL is its GRAPHIR_BASE_URL, so each accepts the other's
 * tokens (their audience). A test that gave `first` a GRAPHIR_BASE_URL gives the peer the same.
 */
export interface PeerServer extends RunningServer {
  /** fetch relative to the FHIR base, with `first`'s project token unless one is given. */
  fhir(path: string, init?: RequestInit): Promise<FhirResponse>;
  /** fetch relative to the server root, as TestServer's `call`. */
  call(path: string, init?: RequestInit): Promise<FhirResponse>;
}

export async function startPeerServer(
  first: TestServer,
  env: NodeJS.ProcessEnv = {},
): Promise<PeerServer> {
  if (!first.database.url) throw new Error('A peer server needs a PostgreSQL database');
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    GRAPHIR_ROOT_CLIENT_ID: ROOT_CLIENT.id,
    GRAPHIR_ROOT_CLIENT_SECRET: ROOT_CLIENT.secret,
    GRAPHIR_BASE_URL: first.url,
    GRAPHIR_PROCESSES: '1',
    DATABASE_URL: first.database.url,
    ...env,
  });
  const server = await startServer(config, {
    db: await openDatabase({ url: first.database.url }),
  });
  return {
    ...server,
    fhir: (path, init = {}) =>
      send(
        `${server.url}/fhir/R4${path}`,
        init,
        'application/fhir+json',
        init.token === undefined ? first.project.token : init.token,
      ),
    call: (path, init = {}) =>
      send(`${server.url}${path}`, init, 'application/json', init.token ?? undefined),
    close: async (options) => {
      await server.close(options);
      await server.db.close();
    },
  };
}

/** A request with a JSON body (as given, or serialised) and a bearer token when there is one. */
function send(
  url: string,
  init: RequestInit,
  contentType: string,
  token: string | null | undefined,
): Promise<FhirResponse> {
  return fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.body === undefined ? {} : { 'Content-Type': contentType }),
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...init.headers,
    },
    body:
      init.body === undefined || typeof init.body === 'string'
        ? (init.body as string | undefined)
        : JSON.stringify(init.body),
  }) as Promise<FhirResponse>;
}

/**
 * Two servers on one fresh PostgreSQL database (a TestServer and its peer), for the describe
 * block this is called in: started before its tests, stopped after them. Read them in the tests.
 */
export function serversSharingOneDatabase(): { first: TestServer; second: PeerServer } {
  const servers = {} as { first: TestServer; second: PeerServer };
  beforeAll(async () => {
    servers.first = await startTestServer('postgres');
    servers.second = await startPeerServer(servers.first);
  });
  afterAll(async () => {
    await servers.second?.close();
    await servers.first?.stop();
  });
  return servers;
}

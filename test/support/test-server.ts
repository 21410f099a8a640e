/** A real Graphir server on a free port, over a test database, for tests that speak HTTP. */
import { loadConfig, type Config } from '../../runtime/config.js';
import { startServer, type RunningServer } from '../../runtime/server.js';
import { createTestDatabase, type Engine, type TestDatabase } from './test-databases.js';

/** Test code reads FHIR JSON of many shapes: `json()` is untyped here on purpose. */
export type FhirResponse = Omit<Response, 'json'> & { json(): Promise<any> };

export interface TestServer extends RunningServer {
  readonly base: string;
  readonly database: TestDatabase;
  /** fetch relative to the FHIR base, with FHIR JSON bodies. */
  fhir(
    path: string,
    init?: { method?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<FhirResponse>;
  stop(): Promise<void>;
}

export async function startTestServer(
  engine: Engine,
  env: NodeJS.ProcessEnv = {},
): Promise<TestServer> {
  const database = await createTestDatabase(engine);
  const config: Config = loadConfig({ PORT: '0', HOST: '127.0.0.1', ...env });
  const server = await startServer(config, { db: database.db });
  const base = `${server.url}/fhir/R4`;
  return {
    ...server,
    base,
    database,
    fhir: (path, init = {}) =>
      fetch(`${base}${path}`, {
        method: init.method ?? 'GET',
        headers: {
          ...(init.body === undefined ? {} : { 'Content-Type': 'application/fhir+json' }),
          ...init.headers,
        },
        body:
          init.body === undefined
            ? undefined
            : typeof init.body === 'string'
              ? init.body
              : JSON.stringify(init.body),
      }),
    stop: async () => {
      await server.close();
      await database.drop();
    },
  };
}

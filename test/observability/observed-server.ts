/**
 * A real server over a fresh PGlite test database whose log lines are captured in memory (at
 * debug level), with a known root client. test/support's server cannot take a logger.
 */
import { loadConfig } from '../../runtime/server/config.js';
import { createLogger } from '../../runtime/observability/logger.js';
import { startServer, type RunningServer } from '../../runtime/server/server.js';
import { createTestDatabase } from '../support/test-databases.js';

export const ROOT = { id: 'obs-root', secret: 'obs-root-secret-5f2c9a' };

export interface ObservedServer extends RunningServer {
  /** Every line logged so far, raw. */
  readonly output: string[];
  /** The parsed log lines. */
  lines(): Record<string, unknown>[];
  token(clientId: string, clientSecret: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startObservedServer(): Promise<ObservedServer> {
  const database = await createTestDatabase('pglite');
  const output: string[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line) => output.push(line) },
  });
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    GRAPHIR_ROOT_CLIENT_ID: ROOT.id,
    GRAPHIR_ROOT_CLIENT_SECRET: ROOT.secret,
  });
  const server = await startServer(config, { db: database.db, logger });
  return {
    ...server,
    output,
    lines: () => output.map((line) => JSON.parse(line) as Record<string, unknown>),
    token: async (clientId, clientSecret) => {
      const body = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: clientSecret,
      });
      const response = await fetch(`${server.url}/oauth2/token`, { method: 'POST', body });
      const json = (await response.json()) as { access_token?: string };
      if (!json.access_token) throw new Error(`token refused: ${response.status}`);
      return json.access_token;
    },
    stop: async () => {
      await server.close();
      await database.drop();
    },
  };
}

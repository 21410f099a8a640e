import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { buildExecutableSchema } from './graphql/build-executable-schema.js';

export interface RunningServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Prepares everything the routes need, then listens: once it answers, it is ready. */
export async function startServer(config: Config): Promise<RunningServer> {
  const schema = buildExecutableSchema();
  const server = createApp({ schema }).listen(config.port, config.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

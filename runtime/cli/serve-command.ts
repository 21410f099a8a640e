/** `graphir serve`: what `npm start` does. */
import type { Argv } from 'yargs';
import { loadConfig } from '../server/config.js';
import { startServer } from '../server/server.js';

export function serveCommand<T>(yargs: Argv<T>): Argv<T> {
  return yargs.command(
    'serve',
    'Serve the API (PORT, HOST, DATABASE_URL, DATA_DIR… from the environment)',
    (y) => y,
    async () => {
      const started = performance.now();
      const server = await startServer(loadConfig());
      console.log(
        `Graphir listening on ${server.url} (ready in ${Math.round(performance.now() - started)} ms)`,
      );
      await new Promise<void>((resolve) => {
        for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, resolve);
      });
      await server.close();
    },
  );
}

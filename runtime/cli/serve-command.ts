/** `graphir serve`: what `npm start` does. */
import type { Argv } from 'yargs';
import { loadConfig } from '../server/config.js';
import { serve } from '../server/serve.js';

export function serveCommand<T>(yargs: Argv<T>): Argv<T> {
  return yargs.command(
    'serve',
    'Serve the API (PORT, HOST, DATABASE_URL, DATA_DIR… from the environment)',
    (y) =>
      y.option('processes', {
        type: 'number',
        describe:
          'Server processes on the one port ($GRAPHIR_PROCESSES; default: one per core with DATABASE_URL, one on the embedded store)',
      }),
    async (argv) => {
      const env =
        argv.processes === undefined
          ? process.env
          : { ...process.env, GRAPHIR_PROCESSES: String(argv.processes) };
      await serve(loadConfig(env));
      process.exit();
    },
  );
}

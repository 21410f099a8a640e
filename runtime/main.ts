/** `npm start`: serves Graphir until SIGTERM or SIGINT. */
import { loadConfig } from './config.js';
import { startServer } from './server.js';

const started = performance.now();
const server = await startServer(loadConfig());
console.log(
  `Graphir listening on ${server.url} (ready in ${Math.round(performance.now() - started)} ms)`,
);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
}

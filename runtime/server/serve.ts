/** Serves Graphir until SIGTERM or SIGINT, then shuts down gracefully (started by main.ts). */
import { loadConfig } from './config.js';
import { startServer } from './server.js';

/** How long in-flight requests may run on after SIGTERM before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

const started = performance.now();
const server = await startServer(loadConfig());
console.log(
  `Graphir listening on ${server.url} (ready in ${Math.round(performance.now() - started)} ms)`,
);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.logger.info({ signal }, 'shutting down');
    // Stop accepting connections, let in-flight requests finish (bounded), wait for queued
    // AuditEvents and statistics; running jobs end (docs/jobs.md), then the sandbox pool and the
    // store close.
    server.close({ graceMs: SHUTDOWN_GRACE_MS }).then(
      () => {
        server.logger.info('shut down');
        process.exit(0);
      },
      (error: unknown) => {
        server.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}

/**
 * Serving until SIGTERM or SIGINT, then shutting down gracefully: `npm start` (main.ts) and
 * `graphir serve`. One process serves alone; with `processes` > 1, this process becomes the
 * supervisor of that many server processes on one port (supervisor.ts), each of which runs here
 * again as a cluster worker.
 */
import cluster from 'node:cluster';
import type { Config } from './config.js';
import { Metrics } from '../observability/metrics.js';
import { startServer } from './server.js';
import { superviseProcesses } from './supervisor.js';
import { SHUTDOWN_GRACE_MS } from './shutdown.js';

/** Resolves once the server (every process) has shut down. */
export async function serve(config: Config): Promise<void> {
  if (config.processes > 1 && cluster.isPrimary) return superviseProcesses(config);
  if (cluster.isWorker) return serveAsWorker(config);
  const started = performance.now();
  const server = await startServer(config);
  console.log(
    `Graphir listening on ${server.url} (ready in ${Math.round(performance.now() - started)} ms)`,
  );
  await untilStopped(server);
}

/**
 * One of the supervisor's processes: it reports readiness by listening (the supervisor prints the
 * address once all are), and exits when its server has shut down, or failed to start.
 */
async function serveAsWorker(config: Config): Promise<void> {
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config, { metrics: new Metrics({ clusterWorker: true }) });
  } catch (error) {
    // What was opened before the failure would keep the process alive; the supervisor must see it end.
    console.error(`graphir: process ${process.pid} failed to start: ${(error as Error).message}`);
    process.exit(1);
  }
  await untilStopped(server);
  process.exit(0);
}

/**
 * Waits for SIGTERM or SIGINT, then stops accepting connections, lets in-flight requests finish
 * (bounded), waits for queued AuditEvents and statistics; running jobs end (docs/jobs.md), then
 * the sandbox pool and the store close. Alone, a second signal of the same kind ends the process
 * at once. Under a supervisor, further signals change nothing: a terminal's Ctrl-C reaches its
 * processes directly as well as through the supervisor, which decides when to kill them.
 */
async function untilStopped(server: Awaited<ReturnType<typeof startServer>>): Promise<void> {
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    for (const name of ['SIGTERM', 'SIGINT'] as const) {
      if (cluster.isWorker) process.on(name, () => resolve(name));
      else process.once(name, () => resolve(name));
    }
  });
  server.logger.info({ signal }, 'shutting down');
  try {
    await server.close({ graceMs: SHUTDOWN_GRACE_MS });
  } catch (error) {
    server.logger.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
  server.logger.info('shut down');
}

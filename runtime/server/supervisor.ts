/**
 * The supervisor of several server processes on one port (Node's cluster module): it forks them,
 * hands them connections in turn, prints the address once all listen, replaces one that dies,
 * and on SIGTERM or SIGINT has each shut down gracefully before it exits itself (on a second
 * signal, at once). It opens no database: start-up work that must happen once (migrations, the
 * first signing key, the root client) is done by whichever process gets there first, under
 * locks (docs/scale-out.md).
 */
import cluster, { type Worker } from 'node:cluster';
import type { Config } from './config.js';
import { listeningUrl } from './listening-url.js';
import { answerMetricsRequests } from '../observability/cluster-metrics.js';
import { SHUTDOWN_GRACE_MS } from './shutdown.js';

/** A process that ran this long before it died was not crash-looping: its replacement starts at once. */
const STABLE_MS = 30_000;
/** Waits before replacing a process that died soon after it started: doubled each time, up to the maximum. */
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 30_000;
/** After the processes' own grace, how long before those still running are killed. */
const KILL_AFTER_MS = SHUTDOWN_GRACE_MS + 5_000;

export async function superviseProcesses(config: Config): Promise<void> {
  const started = performance.now();
  answerMetricsRequests();
  const startedAt = new Map<Worker, number>();
  const fork = () => startedAt.set(cluster.fork(), Date.now());
  let ready = false;
  let stopping = false;
  /** Processes in a row that died soon after they started. */
  let quickDeaths = 0;
  let listening = 0;
  let replacing: NodeJS.Timeout | undefined;

  /** A process that failed to start, or did not shut down cleanly: the supervisor exits 1. */
  let failed = false;

  const workers = () =>
    Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);
  let allExited: () => void = () => {};
  const exited = new Promise<void>((resolve) => (allExited = resolve));
  cluster.on('exit', () => {
    if (stopping && workers().length === 0) allExited();
  });
  const stop = (why: string) => {
    if (stopping) return;
    stopping = true;
    clearTimeout(replacing);
    (failed ? console.error : console.log)(`Graphir shutting down (${why})`);
    // None may be running: all died, and their replacements were still waiting.
    if (workers().length === 0) allExited();
    for (const worker of workers()) worker.process.kill('SIGTERM');
    setTimeout(killAll, KILL_AFTER_MS).unref();
  };
  const killAll = () => {
    for (const worker of workers()) worker.process.kill('SIGKILL');
  };

  cluster.on('listening', (_worker, address) => {
    if (ready || ++listening < config.processes) return;
    ready = true;
    console.log(
      `Graphir listening on ${listeningUrl(config.host, address.port)} with ${config.processes} processes (ready in ${Math.round(performance.now() - started)} ms)`,
    );
  });
  cluster.on('exit', (worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker) ?? Date.now());
    startedAt.delete(worker);
    if (stopping) {
      if (code !== 0) failed = true;
      return;
    }
    const how = signal ?? `exit code ${code}`;
    if (!ready) {
      // As one process's start-up error would, a process that cannot start stops the server.
      failed = true;
      stop(`process ${worker.process.pid} failed to start (${how})`);
      return;
    }
    quickDeaths = lived < STABLE_MS ? quickDeaths + 1 : 0;
    const delay =
      quickDeaths === 0 ? 0 : Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (quickDeaths - 1));
    console.error(
      `Graphir process ${worker.process.pid} died (${how}); replacing it${delay > 0 ? ` in ${delay} ms` : ''}`,
    );
    replacing = setTimeout(() => {
      replacing = undefined;
      if (!stopping) fork();
    }, delay);
  });

  // A second signal (Ctrl-C again) does not wait for the processes' grace.
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.on(signal, () => (stopping ? killAll() : stop(signal)));
  for (let i = 0; i < config.processes; i++) fork();
  await exited;
  if (failed) process.exitCode = 1;
}

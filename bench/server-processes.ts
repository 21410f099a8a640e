/**
 * Graphir servers as separate processes for load benches: started as `npm start` starts them
 * (`node dist/runtime/main.js`, after `npm run build`) or from the sources with tsx, on a free
 * port, with their log lines in a file; and their memory, read from /proc and from /metrics.
 * With PROF_DIR set, each server writes a V8 CPU profile there when it stops (`--cpu-prof`),
 * sampled every PROF_INTERVAL microseconds when that is set.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync } from 'node:fs';

export type ServerMode = 'dist' | 'tsx';

export interface ServerProcess {
  readonly url: string;
  readonly pid: number;
  /** stdout and stderr of the process: pino's JSON request lines, errors, the start-up line. */
  readonly logFile: string;
  stop(): Promise<void>;
}

export interface ServerMemory {
  /** VmRSS from /proc/<pid>/status. */
  readonly rss: number;
  /** From the server's own /metrics (prom-client's process and Node.js metrics). */
  readonly metricsRss?: number;
  readonly heapUsed?: number;
  readonly heapTotal?: number;
  readonly external?: number;
}

const GC_ON_SIGNAL = new URL('./gc-on-signal.mjs', import.meta.url).href;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

/**
 * `gc`: SIGUSR2 makes the process collect garbage (see gc-on-signal.mjs, and `collectGarbage`).
 * `root`: the checkout to run (its dist/ or runtime/), by default this one.
 */
export async function spawnServer(
  mode: ServerMode,
  env: Record<string, string>,
  logFile: string,
  options: { gc?: boolean; root?: string } = {},
): Promise<ServerProcess> {
  const args = [
    ...(options.gc ? ['--expose-gc', '--import', GC_ON_SIGNAL] : []),
    ...(process.env.PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROF_DIR}`] : []),
    ...(process.env.PROF_INTERVAL ? [`--cpu-prof-interval=${process.env.PROF_INTERVAL}`] : []),
    ...(mode === 'dist' ? ['dist/runtime/main.js'] : ['--import', 'tsx', 'runtime/main.ts']),
  ];
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, {
    ...(options.root ? { cwd: options.root } : {}),
    // One process unless the bench asks for more (GRAPHIR_PROCESSES): memory is read by its pid.
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', GRAPHIR_PROCESSES: '1', ...env },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const url = await listeningUrl(child, logFile);
  return {
    url,
    pid: child.pid!,
    logFile,
    stop: () => stop(child),
  };
}

/** Polls the log for main.ts's start-up line. */
async function listeningUrl(child: ChildProcess, logFile: string): Promise<string> {
  const started = performance.now();
  for (;;) {
    const match = /Graphir listening on (http:\/\/\S+)/.exec(readFileSync(logFile, 'utf8'));
    if (match) return match[1];
    if (child.exitCode !== null || performance.now() - started > START_TIMEOUT_MS) {
      child.kill('SIGKILL');
      throw new Error(`the server did not start; its output is in ${logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** SIGTERM (graceful shutdown), then SIGKILL if it takes too long. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/** A full garbage collection in a process started with `gc`, then a moment for it to finish. */
export async function collectGarbage(server: ServerProcess): Promise<void> {
  process.kill(server.pid, 'SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 1000));
}

export async function serverMemory(server: ServerProcess): Promise<ServerMemory> {
  const rss = residentBytes(server.pid);
  try {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const value = (name: string) => {
      const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
      return match ? Number(match[1]) : undefined;
    };
    return {
      rss,
      metricsRss: value('process_resident_memory_bytes'),
      heapUsed: value('nodejs_heap_size_used_bytes'),
      heapTotal: value('nodejs_heap_size_total_bytes'),
      external: value('nodejs_external_memory_bytes'),
    };
  } catch {
    return { rss };
  }
}

/** VmRSS of a process in bytes (Linux). */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) * 1024;
}

/** Requests the server answered with 5xx, by its own count (graphir_http_requests_total). */
export async function serverErrorCount(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  let total = 0;
  for (const match of text.matchAll(/^graphir_http_requests_total\{([^}]*)\} (\S+)$/gm)) {
    if (/status="5\d\d"/.test(match[1])) total += Number(match[2]);
  }
  return total;
}

/** Lines pino logged at level error (50) or fatal (60), and anything that is not JSON (stderr). */
export function loggedErrors(server: ServerProcess): string[] {
  return readFileSync(server.logFile, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .filter((line) => {
      try {
        return (JSON.parse(line) as { level?: number }).level! >= 50;
      } catch {
        return !/^Graphir listening on /.test(line);
      }
    });
}

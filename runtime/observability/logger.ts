/** The server's structured logger: pino, one JSON object a line, to stdout unless told otherwise. */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * `LOG_LEVEL` (default `info`). Under Vitest (`VITEST` set) the default is `silent`, so test runs
 * are not flooded with request lines; tests that check logging pass their own logger.
 */
export function logLevelFrom(env: NodeJS.ProcessEnv = process.env): string {
  const level = env.LOG_LEVEL?.trim().toLowerCase();
  if (!level) return env.VITEST ? 'silent' : 'info';
  if (!LEVELS.has(level)) {
    throw new Error(`LOG_LEVEL must be one of ${[...LEVELS].join(', ')}, not "${env.LOG_LEVEL}"`);
  }
  return level;
}

/** The longest a buffered line waits before it is written. */
export const LOG_FLUSH_MS = 250;
/**
 * Bytes of lines waiting at most, for a stdout that does not keep up (a stalled pipe): past it new
 * lines are dropped, where a synchronous write would stop the server.
 */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/**
 * `bufferBytes` (LOG_BUFFER_BYTES): lines are gathered until there are that many bytes, or for
 * LOG_FLUSH_MS, and written in one call from libuv's thread pool; at exit, whatever waits is
 * written before the process ends. A line written at once costs the server's thread a write
 * system call each, a noticeable share of a simple request's CPU under load. 0 writes each line synchronously as it is logged (pino's default); a process killed
 * outright may lose the lines of its last LOG_FLUSH_MS otherwise.
 */
export function createLogger(
  options: { level?: string; destination?: DestinationStream; bufferBytes?: number } = {},
): Logger {
  const settings = { level: options.level ?? logLevelFrom(), base: { name: 'graphir' } };
  if (options.destination) return pino(settings, options.destination);
  if (options.bufferBytes) return pino(settings, bufferedDestination(1, options.bufferBytes));
  return pino(settings);
}

/** File descriptor or path `dest`, written in batches of `bufferBytes` (see createLogger). */
export function bufferedDestination(
  dest: number | string,
  bufferBytes: number,
  flushMs: number = LOG_FLUSH_MS,
): ReturnType<typeof pino.destination> {
  return pino.destination({
    dest,
    sync: false,
    minLength: bufferBytes,
    periodicFlush: flushMs,
    maxLength: MAX_PENDING_BYTES,
  });
}

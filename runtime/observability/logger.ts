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

export function createLogger(
  options: { level?: string; destination?: DestinationStream } = {},
): Logger {
  const settings = { level: options.level ?? logLevelFrom(), base: { name: 'graphir' } };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

/** Settings read from the environment at start-up (runtime/config.ts): defaults and refusals. */
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../runtime/server/config.js';

describe('settings', () => {
  it.each<[keyof Config, number]>([
    // PostgreSQL: 10 connections, a 10 s wait, 10 minutes idle.
    ['databasePoolSize', 10],
    ['databaseConnectTimeoutMs', 10_000],
    ['databaseIdleTimeoutSeconds', 600],
    ['logBufferBytes', 4096],
  ])('%s is %d by default', (key, value) => {
    expect(loadConfig({})[key]).toBe(value);
  });

  it.each<[string, string, keyof Config, number]>([
    ['DATABASE_POOL_SIZE', '3', 'databasePoolSize', 3],
    ['DATABASE_CONNECT_TIMEOUT_MS', '250', 'databaseConnectTimeoutMs', 250],
    ['DATABASE_IDLE_TIMEOUT_SECONDS', '30', 'databaseIdleTimeoutSeconds', 30],
    // 0 turns log batching off.
    ['LOG_BUFFER_BYTES', '0', 'logBufferBytes', 0],
    ['LOG_BUFFER_BYTES', '16000', 'logBufferBytes', 16_000],
  ])('%s=%s sets %s', (name, text, key, value) => {
    expect(loadConfig({ [name]: text })[key]).toBe(value);
  });

  it.each([
    ['DATABASE_POOL_SIZE', 'ten'],
    ['DATABASE_POOL_SIZE', '0'],
    ['DATABASE_POOL_SIZE', '2.5'],
    ['DATABASE_CONNECT_TIMEOUT_MS', '-1'],
    ['DATABASE_CONNECT_TIMEOUT_MS', 'soon'],
    ['DATABASE_IDLE_TIMEOUT_SECONDS', '0'],
    ['DATABASE_IDLE_TIMEOUT_SECONDS', '1.5'],
    ['LOG_BUFFER_BYTES', '-1'],
    ['LOG_BUFFER_BYTES', '1.5'],
    ['LOG_BUFFER_BYTES', 'lots'],
    // sonic-boom needs a batch below its largest single write (16 KiB).
    ['LOG_BUFFER_BYTES', '16001'],
  ])('refuses %s=%s at start-up, naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(
      new RegExp(`${name} must be a whole number`),
    );
  });
});

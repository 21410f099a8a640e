/** Settings read from the environment at start-up (runtime/config.ts): defaults and refusals. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';

describe('PostgreSQL connection settings', () => {
  it('default to 10 connections, a 10 s wait and 10 minutes idle', () => {
    const config = loadConfig({});
    expect(config.databasePoolSize).toBe(10);
    expect(config.databaseConnectTimeoutMs).toBe(10_000);
    expect(config.databaseIdleTimeoutSeconds).toBe(600);
  });

  it('take whole numbers', () => {
    const config = loadConfig({
      DATABASE_POOL_SIZE: '3',
      DATABASE_CONNECT_TIMEOUT_MS: '250',
      DATABASE_IDLE_TIMEOUT_SECONDS: '30',
    });
    expect(config.databasePoolSize).toBe(3);
    expect(config.databaseConnectTimeoutMs).toBe(250);
    expect(config.databaseIdleTimeoutSeconds).toBe(30);
  });

  it.each([
    ['DATABASE_POOL_SIZE', 'ten'],
    ['DATABASE_POOL_SIZE', '0'],
    ['DATABASE_POOL_SIZE', '2.5'],
    ['DATABASE_CONNECT_TIMEOUT_MS', '-1'],
    ['DATABASE_CONNECT_TIMEOUT_MS', 'soon'],
    ['DATABASE_IDLE_TIMEOUT_SECONDS', '0'],
    ['DATABASE_IDLE_TIMEOUT_SECONDS', '1.5'],
  ])('refuse %s=%s at start-up, naming it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(
      new RegExp(`${name} must be a whole number`),
    );
  });
});

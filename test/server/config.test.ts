/** Settings read from the environment at start-up (runtime/config.ts): defaults and refusals. */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../runtime/server/config.js';

const DATABASE_URL = 'postgres://graphir@db.example:5432/graphir';

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

  it.each([
    ['https://fhir.example.org', 'https://fhir.example.org'],
    ['https://FHIR.Example.org:443/', 'https://fhir.example.org'],
    ['http://localhost:8080', 'http://localhost:8080'],
    ['https://example.org/graphir//', 'https://example.org/graphir'],
  ])('GRAPHIR_BASE_URL=%s is the public root %s', (text, root) => {
    expect(loadConfig({ GRAPHIR_BASE_URL: text }).baseUrl).toBe(root);
  });

  it('leaves the public root to each request when GRAPHIR_BASE_URL is unset or empty', () => {
    expect(loadConfig({}).baseUrl).toBeUndefined();
    expect(loadConfig({ GRAPHIR_BASE_URL: '' }).baseUrl).toBeUndefined();
  });

  it.each([
    ['fhir.example.org', /an absolute http or https URL/],
    ['/graphir', /an absolute http or https URL/],
    ['ftp://fhir.example.org', /an absolute http or https URL/],
    ['https://fhir.example.org/?a=1', /without query, fragment or credentials/],
    ['https://fhir.example.org/#top', /without query, fragment or credentials/],
    ['https://user:secret@fhir.example.org', /without query, fragment or credentials/],
    ['https://fhir.example.org/fhir/R4', /the server root, without \/fhir\/R4/],
    ['https://fhir.example.org/fhir/R4/', /the server root, without \/fhir\/R4/],
  ])('refuses GRAPHIR_BASE_URL=%s at start-up, saying why', (text, why) => {
    expect(() => loadConfig({ GRAPHIR_BASE_URL: text })).toThrow(why);
    expect(() => loadConfig({ GRAPHIR_BASE_URL: text })).toThrow(/^GRAPHIR_BASE_URL must be/);
  });

  it('serves one process per core on PostgreSQL, one on the embedded store, by default', () => {
    expect(loadConfig({ DATABASE_URL }).processes).toBe(availableParallelism());
    expect(loadConfig({}).processes).toBe(1);
    expect(loadConfig({ DATABASE_URL, GRAPHIR_PROCESSES: '3' }).processes).toBe(3);
  });

  it('shares the cores among the processes for bot workers by default', () => {
    const cores = availableParallelism();
    const config = loadConfig({ DATABASE_URL, GRAPHIR_PROCESSES: String(cores) });
    expect(config.botWorkers).toBe(1);
    expect(loadConfig({ DATABASE_URL, GRAPHIR_PROCESSES: '1' }).botWorkers).toBe(cores);
    expect(
      loadConfig({ DATABASE_URL, GRAPHIR_PROCESSES: '4', GRAPHIR_BOT_WORKERS: '3' }).botWorkers,
    ).toBe(3);
  });

  it('refuses more than one process on the embedded store, saying why', () => {
    expect(() => loadConfig({ GRAPHIR_PROCESSES: '2' })).toThrow(
      /GRAPHIR_PROCESSES \(--processes\) is 2, but the embedded store \(PGlite, no DATABASE_URL\) is one process's data directory/,
    );
  });

  it.each(['0', '257', 'two', '1.5'])('refuses GRAPHIR_PROCESSES=%s, naming it', (text) => {
    expect(() => loadConfig({ DATABASE_URL, GRAPHIR_PROCESSES: text })).toThrow(
      /^GRAPHIR_PROCESSES must be a whole number from 1 to 256/,
    );
  });

  it('takes DATABASE_DIRECT_URL only beside DATABASE_URL', () => {
    const direct = 'postgres://graphir@db.example:5432/graphir';
    const pooled = 'postgres://graphir@pgbouncer.example:6432/graphir';
    expect(
      loadConfig({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: direct }).databaseDirectUrl,
    ).toBe(direct);
    expect(() => loadConfig({ DATABASE_DIRECT_URL: direct })).toThrow(
      /DATABASE_DIRECT_URL is the direct way to the database of DATABASE_URL: set both/,
    );
  });
});

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
});

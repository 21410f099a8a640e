/**
 * CORS over HTTP (runtime/http/cors.ts): preflights are answered without a token on every route;
 * answers, errors included, carry the headers a script on another origin needs; an origin not in
 * GRAPHIR_CORS_ORIGINS gets none of them; a malformed GRAPHIR_CORS_ORIGINS stops the server at
 * start-up. cors-browser.test.ts checks the same from a page in Chromium.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/server/config.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const APP = 'https://app.example';
const OTHER = 'https://evil.example';

const REQUIRED_REQUEST_HEADERS = [
  'Authorization',
  'Content-Type',
  'Prefer',
  'If-Match',
  'If-None-Exist',
  'If-None-Match',
  'X-Trace-Id',
];
const REQUIRED_EXPOSED_HEADERS = [
  'Location',
  'ETag',
  'Content-Location',
  'Last-Modified',
  'X-Trace-Id',
  'Retry-After',
];

/** Every family of routes, by a path and the method a script would use there. */
const ROUTES: [method: string, path: string][] = [
  ['GET', '/fhir/R4/Patient'],
  ['PUT', '/fhir/R4/Patient/p1'],
  ['PATCH', '/fhir/R4/Patient/p1'],
  ['DELETE', '/fhir/R4/Patient/p1'],
  ['POST', '/fhir/R4'],
  ['POST', '/fhir/R4/$graphql'],
  ['GET', '/fhir/R4/$graphql/schema.graphql'],
  ['POST', '/fhir/R4/Bot/b1/$execute'],
  ['POST', '/fhir/R4/Bot/$execute?identifier=urn:x|y'],
  ['POST', '/oauth2/token'],
  ['POST', '/admin/projects'],
  ['GET', '/fhir/R4/metadata'],
  ['GET', '/playground/assets/graphiql.js'],
  ['GET', '/healthz'],
];

const list = (header: string | null) =>
  (header ?? '').split(',').map((h) => h.trim().toLowerCase());

describe('GRAPHIR_CORS_ORIGINS', () => {
  it('allows any origin by default', () => {
    expect(loadConfig({}).corsOrigins).toBe('*');
  });

  it.each([
    ['*', '*'],
    [' * ', '*'],
    [APP, [APP]],
    [
      `${APP}, http://localhost:3000,http://127.0.0.1:8081`,
      [APP, 'http://localhost:3000', 'http://127.0.0.1:8081'],
    ],
  ])('reads %j', (text, origins) => {
    expect(loadConfig({ GRAPHIR_CORS_ORIGINS: text }).corsOrigins).toEqual(origins);
  });

  it.each([
    ['', /"" is not an origin/],
    ['app.example', /"app.example" is not an origin/],
    [`${APP}/`, /did you mean https:\/\/app.example\?/],
    [`${APP}/app`, /did you mean https:\/\/app.example\?/],
    ['https://App.Example', /did you mean https:\/\/app.example\?/],
    ['https://app.example:443', /did you mean https:\/\/app.example\?/],
    ['ftp://app.example', /not an http or https origin/],
    [`*,${APP}`, /"\*" is not an origin/],
    [`${APP},,http://localhost:3000`, /"" is not an origin/],
  ])('refuses %j, saying why', (text, why) => {
    const load = () => loadConfig({ GRAPHIR_CORS_ORIGINS: text });
    expect(load).toThrow(/^GRAPHIR_CORS_ORIGINS must be \* or a comma-separated list of origins/);
    expect(load).toThrow(why);
  });

  it('stops the server at start-up, naming the setting', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'graphir-cors-'));
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'runtime/main.ts'], {
        env: { ...process.env, PORT: '0', DATA_DIR: dataDir, GRAPHIR_CORS_ORIGINS: `${APP}/` },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += String(chunk)));
      child.stderr.on('data', (chunk) => (output += String(chunk)));
      const [code] = await once(child, 'exit');
      expect(code).not.toBe(0);
      expect(output).toContain('GRAPHIR_CORS_ORIGINS must be * or a comma-separated list');
      expect(output).not.toContain('listening');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('CORS with any origin allowed (the default)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite');
  });
  afterAll(() => server?.stop());

  const preflight = (method: string, path: string, origin = APP) =>
    fetch(`${server.url}${path}`, {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': method,
        'Access-Control-Request-Headers': 'authorization,content-type,prefer,if-match',
      },
    });

  it.each(ROUTES)('answers a preflight for %s %s without a token', async (method, path) => {
    const response = await preflight(method, path);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    const headers = response.headers;
    expect(headers.get('access-control-allow-origin')).toBe('*');
    expect(list(headers.get('access-control-allow-methods'))).toEqual(
      expect.arrayContaining(['get', 'head', 'post', 'put', 'patch', 'delete', 'options']),
    );
    expect(list(headers.get('access-control-allow-headers'))).toEqual(
      expect.arrayContaining(REQUIRED_REQUEST_HEADERS.map((h) => h.toLowerCase())),
    );
    expect(headers.get('access-control-allow-credentials')).toBeNull();
    expect(Number(headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(headers.get('www-authenticate')).toBeNull();
  });

  it('still asks for a token on an OPTIONS that is no preflight', async () => {
    const response = await fetch(`${server.base}/Patient`, {
      method: 'OPTIONS',
      headers: { Origin: APP },
    });
    expect(response.status).toBe(401);
  });

  it('lets a script read the headers of a create', async () => {
    const response = await server.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient', name: [{ family: 'Cors' }] },
      headers: { Origin: APP, Prefer: 'return=minimal' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(list(response.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining(REQUIRED_EXPOSED_HEADERS.map((h) => h.toLowerCase())),
    );
    expect(response.headers.get('location')).toMatch(/\/Patient\/[^/]+\/_history\/1$/);
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it.each([
    ['no token', '/Patient', null, 401],
    ['an unknown resource', '/Patient/nobody-here', undefined, 404],
    ['an unknown route', '/NoSuchType/x/y/z', undefined, 404],
    ['a bad search', '/Patient?birthdate=not-a-date', undefined, 400],
  ] as const)('puts the CORS headers on errors: %s', async (_name, path, token, status) => {
    const response = await server.fhir(path, { token, headers: { Origin: APP } });
    expect(response.status).toBe(status);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-expose-headers')).toContain('ETag');
    expect((await response.json()).resourceType).toBe('OperationOutcome');
  });

  it('sends CORS headers only to requests from an origin, varying by Origin', async () => {
    const withOrigin = await fetch(`${server.url}/healthz`, { headers: { Origin: APP } });
    expect(withOrigin.headers.get('access-control-allow-origin')).toBe('*');
    const without = await fetch(`${server.url}/healthz`);
    expect(without.status).toBe(200);
    expect(without.headers.get('access-control-allow-origin')).toBeNull();
    expect(without.headers.get('access-control-expose-headers')).toBeNull();
    expect(list(without.headers.get('vary'))).toContain('origin');
  });
});

describe('CORS with a list of origins', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite', {
      GRAPHIR_CORS_ORIGINS: `${APP},http://localhost:3000`,
    });
  });
  afterAll(() => server?.stop());

  it('answers a listed origin with that origin, varying by Origin', async () => {
    for (const origin of [APP, 'http://localhost:3000']) {
      const preflight = await fetch(`${server.base}/$graphql`, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(origin);
      expect(list(preflight.headers.get('vary'))).toContain('origin');

      const read = await server.fhir('/Patient', { headers: { Origin: origin } });
      expect(read.status).toBe(200);
      expect(read.headers.get('access-control-allow-origin')).toBe(origin);
      expect(list(read.headers.get('vary'))).toContain('origin');
    }
  });

  it('gives another origin no CORS headers, and otherwise the same answer', async () => {
    const listed = await server.fhir('/Patient?_count=1', { headers: { Origin: APP } });
    const other = await server.fhir('/Patient?_count=1', { headers: { Origin: OTHER } });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('access-control-expose-headers')).toBeNull();
    expect(list(other.headers.get('vary'))).toContain('origin');
    const { meta: _a, ...otherBundle } = await other.json();
    const { meta: _b, ...listedBundle } = await listed.json();
    expect(otherBundle).toEqual(listedBundle);

    // Its preflight goes on as any OPTIONS does: to the token guard, with nothing allowed.
    const preflight = await fetch(`${server.base}/Patient`, {
      method: 'OPTIONS',
      headers: { Origin: OTHER, 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(401);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.headers.get('access-control-allow-methods')).toBeNull();
  });

  it('sends no CORS headers without an Origin', async () => {
    const response = await server.fhir('/Patient');
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('exposes a bot execution’s X-Trace-Id to a listed origin', { timeout: 60_000 }, async () => {
    const bot = await server.fhir('/Bot', {
      method: 'POST',
      body: {
        resourceType: 'Bot',
        name: 'echo',
        code: 'export async function handler(fhir, event) { return { hello: event.input }; }',
      },
    });
    expect(bot.status).toBe(201);
    const { id } = await bot.json();
    const response = await server.fhir(`/Bot/${id}/$execute`, {
      method: 'POST',
      body: JSON.stringify({ name: 'Ada' }),
      headers: { Origin: APP, 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ hello: { name: 'Ada' } });
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(response.headers.get('x-trace-id')).toBeTruthy();
    expect(list(response.headers.get('access-control-expose-headers'))).toContain('x-trace-id');
  });
});

describe('CORS on a server error', () => {
  it('puts the CORS headers on a 500', async () => {
    const server = await startTestServer('pglite');
    // The store gone from under the server: every read fails inside it.
    await server.db.close();
    try {
      const response = await server.fhir('/Patient/p1', { headers: { Origin: APP } });
      expect(response.status).toBe(500);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect((await response.json()).resourceType).toBe('OperationOutcome');
    } finally {
      await server.close();
    }
  });
});

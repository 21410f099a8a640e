/**
 * CORS as a browser enforces it: a page served from another origin (a small HTTP server of this
 * test's) calls Graphir with fetch and a bearer token: a read, a create with FHIR JSON and
 * `Prefer`, a GraphQL query, a conditional GET of the SDL and a refused call, reading the exposed
 * headers. The same page from an origin not in GRAPHIR_CORS_ORIGINS is refused by the browser.
 * Headless Chromium (Debian's, at /usr/bin/chromium; `.ci/run` installs it).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { CHROMIUM, haveChromium, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** What the page's script found by each call, or the error of a call the browser refused. */
type PageResults = Record<
  'read' | 'create' | 'graphql' | 'sdl' | 'refused',
  Record<string, unknown> & { blocked?: string }
>;

/** The page: its script reads Graphir's base URL, a token and a Patient id from its fragment. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>Another origin</title></head><body>
<script type="module">
const params = new URLSearchParams(location.hash.slice(1));
const base = params.get('base');
const auth = { Authorization: 'Bearer ' + params.get('token') };
const results = {};
// Each call on its own: one the browser refuses leaves the others to be tried.
const step = async (name, call) => {
  try {
    results[name] = await call();
  } catch (error) {
    results[name] = { blocked: String(error) };
  }
};
await step('read', async () => {
  const read = await fetch(base + '/Patient/' + params.get('id'), { headers: auth });
  return {
    status: read.status,
    id: (await read.json()).id,
    etag: read.headers.get('ETag'),
    lastModified: read.headers.get('Last-Modified'),
  };
});
await step('create', async () => {
  const create = await fetch(base + '/Patient', {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/fhir+json', Prefer: 'return=representation' },
    body: JSON.stringify({ resourceType: 'Patient', name: [{ family: 'FromAnotherOrigin' }] }),
  });
  return {
    status: create.status,
    location: create.headers.get('Location'),
    etag: create.headers.get('ETag'),
    family: (await create.json()).name[0].family,
  };
});
await step('graphql', async () => {
  const graphql = await fetch(base + '/$graphql', {
    method: 'POST',
    headers: { ...auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: '{ PatientList(_count: 50) { id } }' }),
  });
  return { status: graphql.status, ids: (await graphql.json()).data.PatientList.map((p) => p.id) };
});
await step('sdl', async () => {
  const sdl = await fetch(base + '/$graphql/schema.graphql', { headers: auth });
  await sdl.text();
  const revalidated = await fetch(base + '/$graphql/schema.graphql', {
    headers: { ...auth, 'If-None-Match': sdl.headers.get('ETag') },
  });
  return { status: sdl.status, etag: sdl.headers.get('ETag'), revalidated: revalidated.status };
});
await step('refused', async () => {
  const refused = await fetch(base + '/Patient', { headers: { Authorization: 'Bearer nonsense' } });
  return {
    status: refused.status,
    challenge: refused.headers.get('WWW-Authenticate'),
    outcome: (await refused.json()).resourceType,
  };
});
window.results = results;
</script></body></html>`;

/** A server of the page, on a port of its own: an origin of its own. */
async function servePage(): Promise<{ server: Server; origin: string }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    response.end(PAGE);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

if (!haveChromium && !process.env.CI) {
  console.warn(
    `Skipping the CORS browser test: ${CHROMIUM} is missing (apt-get install chromium).`,
  );
}

describe.skipIf(!haveChromium && !process.env.CI)('CORS in a browser', () => {
  let graphir: TestServer;
  let allowed: Awaited<ReturnType<typeof servePage>>;
  let other: Awaited<ReturnType<typeof servePage>>;
  let browser: Browser | undefined;
  let patientId: string;

  beforeAll(async () => {
    [allowed, other] = await Promise.all([servePage(), servePage()]);
    graphir = await startTestServer('pglite', { GRAPHIR_CORS_ORIGINS: allowed.origin });
    const created = await graphir.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient', name: [{ family: 'Existing' }] },
    });
    patientId = (await created.json()).id;
    browser = await launchChromium('The CORS browser tests');
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    allowed?.server.close();
    other?.server.close();
    await graphir?.stop();
  });

  /** Opens the page from `origin` and waits for its script's results. */
  const run = async (
    origin: string,
  ): Promise<{ results: PageResults; consoleErrors: string[] }> => {
    const page = await browser!.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    const fragment = new URLSearchParams({
      base: graphir.base,
      token: graphir.project.token,
      id: patientId,
    });
    await page.goto(`${origin}/app#${fragment}`);
    // Expressions run in the page (this file is compiled without the DOM's types).
    await page.waitForFunction("'results' in window", undefined, { timeout: 30_000 });
    const results = (await page.evaluate('window.results')) as PageResults;
    await page.close();
    return { results, consoleErrors };
  };

  it(
    'lets a page on an allowed origin call the API and read the exposed headers',
    { timeout: 60_000 },
    async () => {
      const { results, consoleErrors } = await run(allowed.origin);
      expect(results.read).toEqual({
        status: 200,
        id: patientId,
        etag: 'W/"1"',
        lastModified: expect.stringMatching(/GMT$/),
      });
      expect(results.create).toEqual({
        status: 201,
        location: expect.stringMatching(/\/fhir\/R4\/Patient\/[^/]+\/_history\/1$/),
        etag: 'W/"1"',
        family: 'FromAnotherOrigin',
      });
      const createdId = /Patient\/([^/]+)\/_history/.exec(results.create.location as string)![1];
      expect(results.graphql).toEqual({
        status: 200,
        ids: expect.arrayContaining([patientId, createdId]),
      });
      expect(results.sdl).toEqual({
        status: 200,
        etag: expect.stringMatching(/^"[A-Za-z0-9_-]{43}(-br|-gzip)?"$/),
        revalidated: 304,
      });
      // A refusal reaches the script whole: status, challenge and OperationOutcome.
      expect(results.refused).toEqual({
        status: 401,
        challenge: expect.stringContaining('Bearer'),
        outcome: 'OperationOutcome',
      });
      // Only the 401 the script asked for; no CORS refusal.
      expect(consoleErrors.filter((e) => !/status of 401/.test(e))).toEqual([]);

      const stored = await graphir.fhir(`/Patient/${createdId}`);
      expect((await stored.json()).name[0].family).toBe('FromAnotherOrigin');
    },
  );

  it(
    'is refused by the browser on an origin not allowed, and nothing is stored',
    { timeout: 60_000 },
    async () => {
      const count = async () =>
        (await (await graphir.fhir('/Patient?_summary=count')).json()).total;
      const before = await count();
      const { results, consoleErrors } = await run(other.origin);
      for (const call of ['read', 'create', 'graphql', 'sdl', 'refused'] as const) {
        expect(results[call], call).toEqual({ blocked: 'TypeError: Failed to fetch' });
      }
      expect(consoleErrors.join('\n')).toMatch(/blocked by CORS policy/);
      // The create's preflight was refused, so the browser never sent it.
      expect(await count()).toBe(before);
    },
  );
});

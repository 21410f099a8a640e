/**
 * How the server serves the web app: `/` leads to `/app`, every address under `/app` gets the
 * page (no token needed), the built files have hashed names and a year's immutable lifetime,
 * the page is revalidated each time, and nothing is loaded from elsewhere.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { buildAppForTest, type BuiltApp } from '../support/app-browser.js';

let app: BuiltApp;
let server: TestServer;
beforeAll(async () => {
  app = await buildAppForTest();
  server = await startTestServer('pglite', { GRAPHIR_APP_DIR: app.dir });
});
afterAll(async () => {
  await server?.stop();
  app?.remove();
});

const assetsOf = (html: string) =>
  [...html.matchAll(/(?:src|href)="(\/app\/assets\/[^"]+)"/g)].map((m) => m[1]);

describe('the web app over HTTP', () => {
  it('leads / to /app', async () => {
    const response = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/app');
  });

  it('answers every address under /app with the page, without a token and uncached', async () => {
    for (const path of [
      '/app',
      '/app/',
      '/app/Patient',
      '/app/Patient/123?tab=history',
      '/app/Bot/x',
    ]) {
      const response = await server.call(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(response.headers.get('cache-control'), path).toBe('no-cache');
      const html = await response.text();
      expect(html).toContain('<div id="root">');
      // Nothing from elsewhere: every URL in the page is this server's.
      expect(html).not.toMatch(/https?:\/\//);
    }
    expect((await server.call('/application')).status).toBe(404);
  });

  it('serves the built files by hashed names, cached for good, and nothing else', async () => {
    const html = await (await server.call('/app')).text();
    const assets = assetsOf(html);
    expect(assets).toHaveLength(2);
    const manifest = JSON.parse(readFileSync(join(app.dir, 'manifest.json'), 'utf8')) as {
      assets: string[];
    };
    expect(manifest.assets.length).toBeGreaterThanOrEqual(4); // entry, style, editor, reverse references
    for (const file of manifest.assets) {
      expect(file).toMatch(/^assets\/[\w-]+-[A-Z0-9]{8}\.(js|css)$/);
      const response = await server.call(`/app/${file}`, {
        headers: { 'Accept-Encoding': 'gzip' },
      });
      expect(response.status, file).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('content-type')).toMatch(
        /^text\/(javascript|css); charset=utf-8$/,
      );
      expect(response.headers.get('etag')).toBeTruthy();
      const body = await response.text();
      expect(body).not.toMatch(/https?:\/\/(?!www\.w3\.org|reactjs\.org|react\.dev)/);
    }
    for (const missing of ['/app/assets/nope-ABCDEFGH.js', '/app/assets/', '/app/assets/a/b.js'])
      expect((await server.call(missing)).status, missing).toBe(404);
  });

  it('answers 304 to a browser that has the file', async () => {
    const [script] = assetsOf(await (await server.call('/app')).text());
    const first = await server.call(script);
    const etag = first.headers.get('etag')!;
    const again = await server.call(script, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
  });

  it('says how to build the app when it is not built', async () => {
    const unbuilt = await startTestServer('pglite', { GRAPHIR_APP_DIR: join(app.dir, 'missing') });
    try {
      const response = await unbuilt.call('/app/Patient');
      expect(response.status).toBe(503);
      expect(await response.text()).toContain('npm run build');
      expect((await fetch(`${unbuilt.url}/`, { redirect: 'manual' })).status).toBe(302);
    } finally {
      await unbuilt.stop();
    }
  });

  it('lets the playground use the sign-in the app keeps', async () => {
    const page = await (
      await server.fhir('/$graphql', { token: null, headers: { Accept: 'text/html' } })
    ).text();
    expect(page).toContain("'graphir.token'");
    expect(page).toContain('href="/app"');
  });
});

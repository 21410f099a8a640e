/**
 * The GraphQL playground: a browser's `GET [base]/$graphql` gets GraphiQL, served from this
 * server; the page needs no token, the queries it sends do. The browser test drives a headless
 * Chromium (Debian's, at /usr/bin/chromium; `.ci/run` installs it).
 */
import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { CHROMIUM, haveChromium, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const BROWSER_HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('pglite');
});
afterAll(async () => {
  await server?.stop();
});

describe('playground over HTTP', () => {
  it('serves the page to a browser without a token', async () => {
    const response = await server.fhir('/$graphql', {
      token: null,
      headers: { Accept: BROWSER_HTML },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('vary')).toMatch(/Accept/);
    const html = await response.text();
    expect(html).toContain('GraphiQL');
    expect(html).not.toMatch(/https?:\/\//); // no CDN
  });

  it('keeps GraphQL calls behind the token guard', async () => {
    const html = { Accept: BROWSER_HTML };
    const cases: [string, Parameters<TestServer['fhir']>[1]][] = [
      ['/$graphql', { token: null }],
      ['/$graphql', { token: null, headers: { Accept: 'application/json' } }],
      ['/$graphql?query=%7B__typename%7D', { token: null, headers: html }],
      [
        '/$graphql',
        { token: null, method: 'POST', body: { query: '{__typename}' }, headers: html },
      ],
      ['/$GRAPHQL', { token: null, headers: html }],
      ['/$graphql/schema.graphql', { token: null, headers: html }],
    ];
    for (const [path, init] of cases) {
      const response = await server.fhir(path, init);
      expect(response.status, `${init?.method ?? 'GET'} ${path}`).toBe(401);
    }
  });

  it('still answers JSON to API clients with a token', async () => {
    const response = await server.fhir('/$graphql?query=%7B__typename%7D', {
      headers: { Accept: BROWSER_HTML },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('serves GraphiQL and React from the server, cached for good', async () => {
    const html = await (
      await server.fhir('/$graphql', { token: null, headers: { Accept: 'text/html' } })
    ).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/playground\/assets\/[^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(assets).toHaveLength(4);
    for (const asset of assets) {
      const response = await server.call(asset);
      expect(response.status, asset).toBe(200);
      expect(response.headers.get('cache-control')).toContain('immutable');
      expect((await response.text()).length).toBeGreaterThan(1000);
    }
    expect((await server.call('/playground/assets/nope.js')).status).toBe(404);
  });
});

if (!haveChromium && !process.env.CI) {
  console.warn(
    `Skipping the playground browser test: ${CHROMIUM} is missing (apt-get install chromium).`,
  );
}

describe.skipIf(!haveChromium && !process.env.CI)('playground in a browser', () => {
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
  });

  it('runs a query typed into GraphiQL', { timeout: 90_000 }, async () => {
    const created = await server.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient', name: [{ family: 'Playground' }] },
    });
    expect(created.status).toBe(201);
    const { id } = await created.json();

    browser = await launchChromium('The playground tests');
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const introspection = page.waitForResponse(
      (r) => r.request().method() === 'POST' && r.url().endsWith('/$graphql'),
      { timeout: 60_000 },
    );
    await page.goto(`${server.base}/$graphql#token=${encodeURIComponent(server.project.token)}`);
    expect((await introspection).status()).toBe(200);
    // The token moved from the address bar into sessionStorage and the field.
    expect(page.url()).not.toContain('token=');
    expect(await page.inputValue('#token')).toBe(server.project.token);

    // Autocompletion from the introspected schema.
    const editor = page.locator('.graphiql-query-editor .CodeMirror').first();
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.type('{ PatientLi');
    await expect
      .poll(
        () =>
          page
            .locator('.CodeMirror-hints')
            .innerText()
            .catch(() => ''),
        {
          timeout: 20_000,
        },
      )
      .toContain('PatientList');
    await page.keyboard.press('Escape');

    // insertText: no key events, so no closing brackets added by the editor.
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('{ PatientList { id } }');
    await page.keyboard.press('Control+Enter');
    const result = page.locator('.graphiql-response');
    await expect.poll(() => result.innerText(), { timeout: 20_000 }).toContain(id);
    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/playground.png' });
    expect(pageErrors).toEqual([]);
  });
});

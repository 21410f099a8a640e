/**
 * The web app's Bot details view in headless Chromium through a real server: the facts callers
 * need (id, copied to the clipboard; identifiers; time limit; access), the code saved from the
 * editor (and a refused save shown), the Execute panel run by the copied id with each of the
 * five content types and by identifier with GET, answers by type and console output, a failing
 * bot's error and console, the executions list from AuditEvents; a token that may not write or
 * run bots is offered neither. Pages are checked by axe-core and photographed (test-results/app/).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
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

const ECHO = `export async function handler(fhir, event) {
  console.log('got ' + event.contentType);
  const input = event.input;
  if (input instanceof Hl7Message) return input.buildAck();
  if (event.contentType === 'text/plain') return 'echo: ' + input;
  if (event.contentType === 'application/fhir+json') return input;
  return { received: input };
}
`;
const FAILING = `export async function handler() {
  console.log('about to fail');
  throw new Error('asked to fail');
}
`;

if (!haveChromium && !process.env.CI)
  console.warn(
    `Skipping the web app's bot tests: ${CHROMIUM} is missing (apt-get install chromium).`,
  );

describe.skipIf(!haveChromium && !process.env.CI)('the web app: bots', { timeout: 120_000 }, () => {
  let app: BuiltApp;
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let foreign: string[];
  const pageErrors: string[] = [];
  let echoId: string;
  let failingId: string;

  const createBot = async (body: Record<string, unknown>) => {
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', ...body },
    });
    expect(response.status).toBe(201);
    return (await response.json()).id as string;
  };

  /** A new tab signed in with `token`, as the sign-in page leaves it. */
  const signedInPage = async (token: string): Promise<[BrowserContext, Page]> => {
    const ctx = await browser.newContext({ viewport: LAPTOP });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    await ctx.addInitScript(`sessionStorage.setItem('graphir.token', ${JSON.stringify(token)})`);
    const tab = await ctx.newPage();
    tab.on('pageerror', (error) => pageErrors.push(error.message));
    foreign.push(...foreignRequests(tab, server.url));
    return [ctx, tab];
  };

  beforeAll(async () => {
    [app, browser] = await Promise.all([buildAppForTest(), launchChromium()]);
    server = await startTestServer('pglite', { GRAPHIR_APP_DIR: app.dir });
    echoId = await createBot({
      name: 'Echo',
      identifier: [{ system: 'urn:test', value: 'echo' }],
      timeout: 5,
      scope: 'system/Patient.rs',
      code: ECHO,
    });
    failingId = await createBot({ name: 'Failing', code: FAILING });
    foreign = [];
    [context, page] = await signedInPage(server.project.token);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    app?.remove();
  });

  it('shows a Bot’s details and copies its id', async () => {
    await page.goto(`${server.url}/app`);
    await page.getByRole('link', { name: 'Bots' }).click();
    await page.getByRole('heading', { name: 'Bot', exact: true }).waitFor();
    await page.getByRole('link', { name: echoId }).click();
    await page.getByRole('heading', { name: /Echo/ }).waitFor();
    const facts = await page.locator('.facts').innerText();
    expect(facts).toContain(echoId);
    expect(facts).toContain('urn:test|echo');
    expect(facts).toContain('5 s');
    expect(facts).toContain('system/Patient.rs');
    expect(facts).toMatch(/Runs as its caller\s+no/);
    expect(facts).toMatch(/Last update\s+\S.*\(version 1\)/);
    await page.locator('.cm-content').first().waitFor();
    expect(await page.locator('.cm-content').first().innerText()).toContain('buildAck');

    await page.getByRole('button', { name: 'Copy id' }).click();
    await page.getByText('Copied').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(echoId);
    expect(await checkPage(page, 'bot')).toEqual([]);
  });

  it('runs the bot by the copied id with each content type', async () => {
    const copied = (await page.evaluate('navigator.clipboard.readText()')) as string;
    expect(await page.locator('label', { hasText: 'Id' }).first().innerText()).toContain(
      `Bot/${copied}/$execute`,
    );
    const cases: [type: string, input: string, answer: (panel: string) => void][] = [
      ['text/plain', 'hi there', (panel) => expect(panel).toMatch(/Answer\s+echo: hi there/)],
      [
        'application/json',
        '{"a": 1}',
        (panel) => expect(panel).toMatch(/"received": \{\s+"a": 1\s+\}/),
      ],
      [
        'application/x-www-form-urlencoded',
        'a=1&b=two',
        (panel) => expect(panel).toMatch(/"a": "1",\s+"b": "two"/),
      ],
      [
        'application/fhir+json',
        '{"resourceType": "Patient", "name": [{"family": "Doe"}]}',
        (panel) => expect(panel).toMatch(/A Patient[\s\S]*"family": "Doe"/),
      ],
      [
        'x-application/hl7-v2+er7',
        'MSH|^~\\&|LAB|ACME|EHR|HOSP|20260101120000||ADT^A01|MSG0001|P|2.5\nPID|1||12345^^^HOSP^MR||Doe^Jane',
        (panel) => {
          expect(panel).toMatch(/MSH\s+\^~\\&\|EHR\|HOSP\|LAB\|ACME\|/);
          expect(panel).toMatch(/MSA\s+AA\|MSG0001\|/);
        },
      ],
    ];
    const result = page.locator('.run-result');
    for (const [type, input, answer] of cases) {
      await page.getByLabel('Content type').selectOption(type);
      await replaceEditorText(
        page,
        page.getByRole('textbox', { name: 'Input', exact: true }),
        input,
      );
      await page.getByRole('button', { name: 'Execute' }).click();
      await expect.poll(() => result.innerText(), { timeout: 20_000 }).toMatch(/200 OK/);
      await expect.poll(() => page.getByLabel('Console output').innerText()).toBe(`got ${type}`);
      answer(await result.innerText());
      if (type.includes('hl7')) expect(await checkPage(page, 'bot-executed')).toEqual([]);
    }
  });

  it('runs the bot by identifier with GET parameters', async () => {
    await page.getByLabel('Identifier', { exact: true }).check();
    await page.getByLabel('GET with parameters').check();
    await page.getByRole('textbox', { name: 'Parameters' }).fill('name=Ada');
    await page.getByRole('button', { name: 'Execute' }).click();
    const result = page.locator('.run-result');
    await expect.poll(() => result.innerText(), { timeout: 20_000 }).toMatch(/200 OK/);
    expect(await result.innerText()).toMatch(/"received": \{\s+"name": "Ada"\s+\}/);
  });

  it('lists the executions from their AuditEvents', async () => {
    const rows = page.locator('table.executions tbody tr');
    await expect.poll(() => rows.count()).toBe(6);
    const traceId = await page.locator('.run-result code').last().innerText();
    const newest = await rows.first().innerText();
    expect(newest).toContain('ok');
    expect(newest).toMatch(/\d+ ms/);
    expect(newest).toContain(server.project.clientId);
    expect(newest).toContain(traceId);
  });

  it('shows a failing bot’s error and console', async () => {
    await page.goto(`${server.url}/app/Bot/${failingId}`);
    await page.getByRole('heading', { name: /Failing/ }).waitFor();
    await page.getByLabel('Content type').selectOption('text/plain');
    await page.getByRole('button', { name: 'Execute' }).click();
    const result = page.locator('.run-result');
    await expect.poll(() => result.innerText(), { timeout: 20_000 }).toMatch(/400 failed/);
    expect(await result.innerText()).toContain('asked to fail');
    await expect.poll(() => page.getByLabel('Console output').innerText()).toBe('about to fail');
    await expect
      .poll(() => page.locator('table.executions tbody tr').first().innerText())
      .toMatch(/error: asked to fail/);
    expect(await checkPage(page, 'bot-failed')).toEqual([]);
  });

  it('saves new code, and shows a save the server refuses', async () => {
    await page.goto(`${server.url}/app/Bot/${failingId}`);
    const code = page.getByRole('textbox', { name: 'Bot code' });
    await code.waitFor();
    await page.locator('table.executions').waitFor();
    await replaceEditorText(page, code, 'export async function handler() { return "fixed"; }');
    await page.getByRole('button', { name: 'Save code' }).click();
    await page.getByText('(version 2)').waitFor();
    expect((await (await server.fhir(`/Bot/${failingId}`)).json()).code).toContain('"fixed"');

    // Changed elsewhere meanwhile: the page's version is outdated, and the server says so.
    const current = await (await server.fhir(`/Bot/${failingId}`)).json();
    await server.fhir(`/Bot/${failingId}`, {
      method: 'PUT',
      body: { ...current, name: 'Renamed' },
    });
    await replaceEditorText(page, code, 'export async function handler() { return "mine"; }');
    await page.getByRole('button', { name: 'Save code' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toMatch(/version/i);
    expect((await (await server.fhir(`/Bot/${failingId}`)).json()).code).toContain('"fixed"');
  });

  it('offers no Save and no Execute to a token that may do neither', async () => {
    const created = await server.call(`/admin/projects/${server.project.projectId}/clients`, {
      method: 'POST',
      token: server.project.token,
      body: { name: 'bot reader', scope: 'system/Bot.rs system/AuditEvent.rs' },
    });
    expect(created.status).toBe(201);
    const reader = (await created.json()) as { clientId: string; clientSecret: string };
    const [readerContext, readerPage] = await signedInPage(
      await server.token(reader.clientId, reader.clientSecret),
    );
    await readerPage.goto(`${server.url}/app/Bot/${echoId}`);
    await readerPage.getByRole('heading', { name: /Echo/ }).waitFor();
    await readerPage.getByText('This token may not run bots').waitFor();
    expect(await readerPage.getByRole('button', { name: 'Save code' }).count()).toBe(0);
    expect(await readerPage.getByRole('button', { name: 'Execute' }).count()).toBe(0);
    expect(await readerPage.getByText('read only').count()).toBe(1);
    await expect.poll(() => readerPage.locator('table.executions tbody tr').count()).toBe(6);
    expect(await checkPage(readerPage, 'bot-read-only')).toEqual([]);
    await readerContext.close();
  });

  it('sends no request elsewhere and raises no page error', async () => {
    await context.close();
    expect(foreign).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});

/** The editor's whole text replaced, as typed without the editor's bracket closing. */
async function replaceEditorText(
  page: Page,
  editor: ReturnType<Page['getByRole']>,
  text: string,
): Promise<void> {
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
  await expect.poll(() => editor.innerText()).toBe(text);
}

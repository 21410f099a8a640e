/**
 * How long the GraphQL playground takes, after a user submits a token, until its docs explorer
 * can be used: Docs opened, `Query` clicked, the `PatientList` field shown and clickable; then
 * how long clicking through to the `Patient` type takes until its fields show. Also the size of
 * the introspection response as the browser received it.
 *
 *   npm run bench:docs -- [--runs N] [ROOT...]   (default ROOT: this checkout)
 *
 * Each ROOT is a checkout (by default this one): its server runs as `npx tsx runtime/main.ts` from there (its own
 * code), on embedded PostgreSQL in a temporary folder. Runs alternate between the checkouts, each
 * in a fresh browser context, after one warm-up run per checkout (which fills the server's
 * introspection cache) that is shown but not counted. Needs Chromium at /usr/bin/chromium.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page, type Response } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
const ROOT_CLIENT = { id: 'bench-root', secret: 'bench-root-secret' };
const TIMEOUT_MS = 300_000;

interface Server {
  readonly root: string;
  readonly url: string;
  readonly token: string;
  stop(): Promise<void>;
}

interface Run {
  /** Milliseconds from submitting the token. */
  readonly introspectionDone: number;
  /** The explorer shows the schema's root types (`query: Query`). */
  readonly schemaShown: number;
  /** `Query` clicked as soon as it showed, and its `PatientList` field shows. */
  readonly docsUsable: number;
  /** Milliseconds from clicking `Patient` until its fields show. */
  readonly patientType: number;
  readonly bodyBytes: number | undefined;
  readonly transferBytes: number;
  readonly contentEncoding: string;
  readonly introspectionRequests: number;
  readonly pageErrors: string[];
}

async function startServer(root: string): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'graphir-docs-explorer-'));
  const child = spawn('npx', ['tsx', 'runtime/main.ts'], {
    cwd: root,
    detached: true, // its own process group, so that stop() ends npx, tsx and node together
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      GRAPHIR_ROOT_CLIENT_ID: ROOT_CLIENT.id,
      GRAPHIR_ROOT_CLIENT_SECRET: ROOT_CLIENT.secret,
    },
  });
  const stop = async () => {
    if (child.exitCode === null) {
      process.kill(-child.pid!, 'SIGTERM');
      await new Promise((done) => child.once('exit', done));
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const url = await listeningUrl(child);
    const rootToken = await token(url, ROOT_CLIENT.id, ROOT_CLIENT.secret);
    const response = await fetch(`${url}/admin/projects`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${rootToken}` },
      body: JSON.stringify({ name: 'Docs explorer' }),
    });
    if (response.status !== 201) throw new Error(`project refused: ${response.status}`);
    const project = (await response.json()) as { clientId: string; clientSecret: string };
    return { root, url, token: await token(url, project.clientId, project.clientSecret), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((done, fail) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk;
      const match = /listening on (\S+)/.exec(output);
      if (match) done(match[1]!);
    });
    child.once('exit', (code) => fail(new Error(`server exited (${code}):\n${output}`)));
  });
}

async function token(url: string, clientId: string, clientSecret: string): Promise<string> {
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: clientSecret,
  });
  const response = await fetch(`${url}/oauth2/token`, { method: 'POST', body });
  const json = (await response.json()) as { access_token?: string };
  if (!json.access_token) throw new Error(`token refused: ${response.status}`);
  return json.access_token;
}

/** For code Playwright runs in the page: the project type-checks without the DOM library. */
declare const document: {
  querySelectorAll(
    selector: string,
  ): Iterable<{ textContent: string | null; checkVisibility(): boolean }>;
};

/**
 * The first link in the docs explorer (`type-name` or `field-name`) reading `text`, once it is
 * visible, and when the page saw it (checked on every animation frame, with no Playwright
 * locator: those take seconds to search the explorer's tens of thousands of elements).
 */
async function appear(page: Page, kind: 'type-name' | 'field-name', text: string) {
  const found = await page.waitForFunction(
    ([selector, text]) => {
      for (const link of document.querySelectorAll(selector))
        if (link.textContent === text && link.checkVisibility()) return { link, at: Date.now() };
      return undefined;
    },
    [`.graphiql-doc-explorer a.graphiql-doc-explorer-${kind}`, text] as const,
    { polling: 'raf', timeout: TIMEOUT_MS },
  );
  const link = (await found.getProperty('link')).asElement()!;
  const at = (await (await found.getProperty('at')).jsonValue()) as number;
  await found.dispose();
  return { link, at };
}

async function measure(browser: Browser, server: Server): Promise<Run> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(TIMEOUT_MS);
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    const introspections: Response[] = [];
    page.on('response', (r) => {
      if (r.request().method() === 'POST' && r.url().endsWith('/$graphql')) introspections.push(r);
    });

    await page.goto(`${server.url}/fhir/R4/$graphql`);
    const docsButton = page.getByRole('button', { name: 'Show Documentation Explorer' });
    await docsButton.waitFor(); // GraphiQL has rendered (without a token, it fetched nothing)
    await page.locator('#token').fill(server.token);

    const submitted = Date.now();
    await page.getByRole('button', { name: 'Use token' }).click();
    await docsButton.click();
    const query = await appear(page, 'type-name', 'Query');
    await query.link.click();
    const patientList = await appear(page, 'field-name', 'PatientList');
    await patientList.link.click({ trial: true }); // it can be clicked: stable, receives events

    const patient = await appear(page, 'type-name', 'Patient'); // `Patient(id: ID!): Patient`
    const clicked = Date.now();
    await patient.link.click();
    const birthDate = await appear(page, 'field-name', 'birthDate');
    await birthDate.link.click({ trial: true });

    const response = introspections[0];
    if (!response) throw new Error('no introspection request');
    await response.finished();
    const timing = response.request().timing();
    const sizes = await response.request().sizes();
    // The body's decoded size from Resource Timing (Chromium drops a large body from the
    // buffers response.body() reads).
    const bodyBytes = await page.evaluate(
      (url) =>
        (performance.getEntriesByName(url, 'resource')[0] as { decodedBodySize?: number })
          ?.decodedBodySize,
      response.url(),
    );
    return {
      introspectionDone: timing.startTime + timing.responseEnd - submitted,
      schemaShown: query.at - submitted,
      docsUsable: patientList.at - submitted,
      patientType: birthDate.at - clicked,
      bodyBytes,
      transferBytes: sizes.responseBodySize,
      contentEncoding: (await response.headerValue('content-encoding')) ?? 'none',
      introspectionRequests: introspections.length,
      pageErrors,
    };
  } finally {
    await context.close();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const megabytes = (bytes: number | undefined) =>
  bytes === undefined ? '?' : `${(bytes / 1e6).toFixed(1)} MB`;

const TIMES = {
  introspectionDone: 'introspection received',
  schemaShown: 'schema shown',
  docsUsable: 'docs usable',
  patientType: 'Patient type',
} as const;
type Time = keyof typeof TIMES;
const times = (of: (key: Time) => number) =>
  (Object.keys(TIMES) as Time[]).map((key) => `${TIMES[key]} ${seconds(of(key))}`).join(', ');

function describe(label: string, run: Run): string {
  return (
    `${label}: ${times((key) => run[key])}; ` +
    `body ${megabytes(run.bodyBytes)}, transferred ${megabytes(run.transferBytes)}, ` +
    `content-encoding ${run.contentEncoding}` +
    (run.introspectionRequests === 1 ? '' : `, ${run.introspectionRequests} requests`) +
    (run.pageErrors.length ? `, page errors: ${run.pageErrors.join('; ')}` : '')
  );
}

async function main() {
  const args = process.argv.slice(2);
  let runs = 3;
  const at = args.indexOf('--runs');
  if (at >= 0) runs = Number(args.splice(at, 2)[1]);
  const roots = (args.length > 0 ? args : ['.']).map((root) => resolve(root));
  if (!(runs > 0)) {
    console.error(
      'usage: npm run bench:docs -- [--runs N] [ROOT...]   (default ROOT: this checkout)',
    );
    process.exit(2);
  }

  const servers: Server[] = [];
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  try {
    for (const root of roots) {
      servers.push(await startServer(root));
      console.log(`${root}: server at ${servers.at(-1)!.url}`);
    }
    for (const server of servers)
      console.log(describe(`${server.root} warm-up`, await measure(browser, server)));
    const results = new Map<Server, Run[]>(servers.map((server) => [server, []]));
    for (let i = 1; i <= runs; i++) {
      for (const server of servers) {
        const run = await measure(browser, server);
        results.get(server)!.push(run);
        console.log(describe(`${server.root} run ${i}`, run));
      }
    }
    console.log(
      `\nmedians (load average now ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}):`,
    );
    for (const [server, list] of results)
      console.log(`${server.root}: ${times((key) => median(list.map((run) => run[key])))}`);
  } finally {
    await browser.close();
    for (const server of servers) await server.stop();
  }
}

await main();

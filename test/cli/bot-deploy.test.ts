/**
 * `graphir bot deploy` bundles a bot's TypeScript or JavaScript with its imports (esbuild), keeps
 * the source map in the Bot, and a failing bot's stack names the bot's own files and lines. The
 * command runs as a child process in a bot project of its own (its `src/`, its `node_modules`),
 * against a real server; the bots run over HTTP.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { connectionTo, runGraphir, type CliRun } from '../support/graphir-cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** Each run starts Node with tsx: seconds each on a loaded machine. */
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

/** `graphir …` run in `cwd`, the bot project, as its developer would. */
function graphir(server: TestServer, cwd: string, args: string[]): Promise<CliRun> {
  return runGraphir(args, { cwd, env: connectionTo(server) });
}

const FORMAT = `export function greeting(name: string): string {
  if (!name) throw new RangeError('no name to greet');
  return \`Hello \${name}\`;
}
`;

const BOT = `import { getReferenceString } from '@medplum/core';
import { greeting } from './format';

interface Input {
  readonly id: string;
  readonly fail?: boolean;
  readonly log?: boolean;
}

export async function handler(medplum: unknown, event: { input: Input }): Promise<unknown> {
  if (event.input.fail) {
    throw new Error('asked to fail');
  }
  if (event.input.log) {
    console.error(new Error('logged, not thrown'));
  }
  const reference: string = getReferenceString({ resourceType: 'Patient', id: event.input.id });
  return { reference, greeting: greeting(event.input.id) };
}
`;

/** The 1-based line of `source` that contains `text`. */
function lineOf(source: string, text: string): number {
  return source.split('\n').findIndex((line) => line.includes(text)) + 1;
}

/** A bot project: `src/` with the files given, and the repository's node_modules. */
async function botProject(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'graphir-bot-project-'));
  await symlink(resolve('node_modules'), join(dir, 'node_modules'), 'dir');
  await mkdir(join(dir, 'src'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, 'src', name), text);
  return dir;
}

async function execute(server: TestServer, id: string, input: unknown) {
  const response = await server.fhir(`/Bot/${id}/$execute`, {
    method: 'POST',
    body: JSON.stringify(input),
    headers: { 'Content-Type': 'application/json' },
  });
  return { status: response.status, body: await response.json() };
}

async function botsWithIdentifier(server: TestServer, identifier: string): Promise<number> {
  const found = await (
    await server.fhir(`/Bot?identifier=${encodeURIComponent(identifier)}&_count=0&_total=accurate`)
  ).json();
  return found.total;
}

describe('graphir bot deploy', () => {
  let server: TestServer;
  let project: string;
  let id: string;

  beforeAll(async () => {
    server = await startTestServer('pglite');
    project = await botProject({ 'format.ts': FORMAT, 'my-bot.ts': BOT });
  });

  afterAll(async () => {
    await server?.stop();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('bundles a TypeScript bot with npm and local imports, keeps its source map, prints its size', async () => {
    const run = await graphir(server, project, [
      'bot',
      'deploy',
      'src/my-bot.ts',
      '--identifier',
      'urn:test|typescript',
    ]);
    expect(run.code, run.stderr).toBe(0);
    id = run.stdout.trim();
    expect(id).toMatch(/^\S+$/);
    expect(run.stderr).toMatch(/^bundled src\/my-bot\.ts → \d+\.\d KB \(source map \d+\.\d KB\)$/m);

    const bot = await (await server.fhir(`/Bot/${id}`)).json();
    expect(bot.name).toBe('my-bot');
    expect(bot.code).not.toContain('interface Input');
    const map = JSON.parse(bot.sourceMap);
    const own = map.sources.indexOf('src/my-bot.ts');
    expect(own).toBeGreaterThanOrEqual(0);
    expect(map.sourcesContent[own]).toBe(BOT);
    // Packages' sources are mapped, their text left out.
    const packaged = map.sources.findIndex((source: string) => source.includes('node_modules/'));
    expect(packaged).toBeGreaterThanOrEqual(0);
    expect(map.sourcesContent[packaged]).toBeNull();

    const answer = await execute(server, id, { id: '123' });
    expect(answer).toEqual({
      status: 200,
      body: { reference: 'Patient/123', greeting: 'Hello 123' },
    });
  });

  it('deploying again updates the same Bot', async () => {
    await writeFile(join(project, 'src', 'format.ts'), FORMAT.replace('Hello', 'Welcome'));
    try {
      const run = await graphir(server, project, [
        'bot',
        'deploy',
        'src/my-bot.ts',
        '--identifier',
        'urn:test|typescript',
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout.trim()).toBe(id);
      expect(await botsWithIdentifier(server, 'urn:test|typescript')).toBe(1);
      expect((await execute(server, id, { id: '7' })).body.greeting).toBe('Welcome 7');
    } finally {
      await writeFile(join(project, 'src', 'format.ts'), FORMAT);
    }
  });

  it('a failing bundled bot: its message in diagnostics, its stack at its own files and lines', async () => {
    const thrown = await execute(server, id, { id: '1', fail: true });
    expect(thrown.status).toBe(400);
    const [error, stack] = thrown.body.issue;
    expect(error).toEqual({ severity: 'error', code: 'processing', diagnostics: 'asked to fail' });
    expect(stack).toMatchObject({ severity: 'information', code: 'informational' });
    expect(stack.diagnostics).toMatch(
      new RegExp(
        `^Error: asked to fail\\n    at handler \\(src/my-bot\\.ts:${lineOf(BOT, 'asked to fail')}:\\d+\\)`,
      ),
    );

    // Two frames: in a local module, then in the bot.
    const deeper = await execute(server, id, { id: '' });
    expect(deeper.body.issue[0].diagnostics).toBe('no name to greet');
    const frames = deeper.body.issue[1].diagnostics.split('\n');
    expect(frames[0]).toBe('RangeError: no name to greet');
    expect(frames[1]).toMatch(
      new RegExp(`^    at greeting \\(src/format\\.ts:${lineOf(FORMAT, 'no name')}:\\d+\\)$`),
    );
    expect(frames[2]).toMatch(
      new RegExp(`^    at handler \\(src/my-bot\\.ts:${lineOf(BOT, 'greeting(event')}:\\d+\\)$`),
    );

    // The AuditEvent keeps the stack too.
    const audits = await (
      await server.fhir(`/AuditEvent?entity=Bot/${id}&outcome=4&_count=10`)
    ).json();
    const details = audits.entry.flatMap((entry: any) => entry.resource.entity[0].detail);
    const stacks = details.filter((detail: any) => detail.type === 'stack');
    expect(stacks.map((detail: any) => detail.valueString)).toEqual(
      expect.arrayContaining([stack.diagnostics, deeper.body.issue[1].diagnostics]),
    );

    // Frames in the console are mapped too.
    const logged = await server.fhir(`/Bot/${id}/$execute`, {
      method: 'POST',
      body: JSON.stringify({ id: '2', log: true }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(logged.status).toBe(200);
    const traceId = logged.headers.get('X-Trace-Id');
    const latest = await (
      await server.fhir(`/AuditEvent?entity=Bot/${id}&outcome=0&_sort=-_lastUpdated&_count=1`)
    ).json();
    const latestDetails = latest.entry[0].resource.entity[0].detail;
    expect(latestDetails).toContainEqual({ type: 'trace-id', valueString: traceId });
    const consoleTail = latestDetails.find((detail: any) => detail.type === 'console').valueString;
    expect(consoleTail).toContain('Error: logged, not thrown');
    expect(consoleTail).toContain(`(src/my-bot.ts:${lineOf(BOT, "new Error('logged")}:`);

    // The command reports the failure in one line, without the stack.
    const run = await graphir(server, project, ['bot', 'execute', id, '--get', 'fail=yes']);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('asked to fail');
    expect(run.stderr).not.toContain('my-bot.ts');
  });

  it('--minify: a smaller bundle whose stack still names the bot’s own lines', async () => {
    const run = await graphir(server, project, [
      'bot',
      'deploy',
      'src/my-bot.ts',
      '--identifier',
      'urn:test|minified',
      '--minify',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const minified = run.stdout.trim();
    const [full, small] = await Promise.all(
      [id, minified].map(async (bot) => (await (await server.fhir(`/Bot/${bot}`)).json()).code),
    );
    expect(small.length).toBeLessThan(full.length * 0.9);
    expect((await execute(server, minified, { id: '5' })).body.reference).toBe('Patient/5');
    const thrown = await execute(server, minified, { id: '5', fail: true });
    expect(thrown.body.issue[1].diagnostics).toMatch(
      new RegExp(`\\(src/my-bot\\.ts:${lineOf(BOT, 'asked to fail')}:\\d+\\)`),
    );
  });

  it('a syntax error: esbuild’s message in one line, exit ≠ 0, nothing stored', async () => {
    await writeFile(join(project, 'src', 'broken.ts'), 'const a: number = 1;\nconst b c = 2;\n');
    const run = await graphir(server, project, [
      'bot',
      'deploy',
      'src/broken.ts',
      '--identifier',
      'urn:test|broken',
    ]);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('cannot bundle src/broken.ts: src/broken.ts:2:9: Expected ";"');
    expect(await botsWithIdentifier(server, 'urn:test|broken')).toBe(0);
  });

  it('imports a sandbox cannot have, and a missing file, are refused before anything is stored', async () => {
    await writeFile(
      join(project, 'src', 'node-only.ts'),
      "import { readFileSync } from 'node:fs';\nexport const handler = () => readFileSync('/etc/passwd', 'utf8');\n",
    );
    await writeFile(
      join(project, 'src', 'unknown-package.ts'),
      "import pad from 'no-such-package';\nexport const handler = () => pad('x');\n",
    );
    const cases: [string, string][] = [
      ['src/node-only.ts', 'Could not resolve "node:fs" (one of Node\'s modules'],
      ['src/unknown-package.ts', 'Could not resolve "no-such-package"'],
      ['src/missing.ts', 'cannot read src/missing.ts'],
    ];
    for (const [file, message] of cases) {
      const run = await graphir(server, project, [
        'bot',
        'deploy',
        file,
        '--identifier',
        'urn:test|refused',
      ]);
      expect(run.code, file).not.toBe(0);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(message);
    }
    expect(await botsWithIdentifier(server, 'urn:test|refused')).toBe(0);
  });
});

describe('stacks of bots stored as they are (no bundle)', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer('pglite');
  });

  afterAll(async () => {
    await server?.stop();
  });

  async function stackOf(bot: Record<string, unknown>): Promise<string> {
    const created = await (
      await server.fhir('/Bot', { method: 'POST', body: { resourceType: 'Bot', ...bot } })
    ).json();
    const { status, body } = await execute(server, created.id, {});
    expect(status).toBe(400);
    expect(body.issue).toHaveLength(2);
    return body.issue[1].diagnostics;
  }

  it('an ES module names bot.mjs and its lines', async () => {
    const code =
      'function inner() {\n  throw new TypeError("bad");\n}\nexport async function handler() { inner(); }\n';
    const stack = await stackOf({ code });
    expect(stack).toMatch(
      /^TypeError: bad\n    at inner \(bot\.mjs:2:\d+\)\n    at handler \(bot\.mjs:4:\d+\)/,
    );
  });

  it('CommonJS names bot.js, its lines, and columns of its first line as in the code', async () => {
    const code = 'exports.handler = async () => { null.x; };\n';
    const stack = await stackOf({ code });
    expect(stack).toContain(`(bot.js:1:${code.indexOf('.x') + 1})`);
  });

  it('a sourceMap that is no source map leaves the positions as in the code', async () => {
    const code = 'export async function handler() {\n  throw new Error("x");\n}\n';
    const stack = await stackOf({ code, sourceMap: 'not a source map' });
    expect(stack).toMatch(/\(bot\.mjs:2:\d+\)/);
  });

  it('a thrown value without a stack: only the message', async () => {
    const created = await (
      await server.fhir('/Bot', {
        method: 'POST',
        body: { resourceType: 'Bot', code: 'export async function handler() { throw "plain"; }' },
      })
    ).json();
    const { status, body } = await execute(server, created.id, {});
    expect(status).toBe(400);
    expect(body.issue).toEqual([{ severity: 'error', code: 'processing', diagnostics: 'plain' }]);
  });
});

/**
 * A bot that bundles all of @medplum/core (about 350 KB of code and as much source map) is stored,
 * read for every execution and parsed by QuickJS within the server's limits, on each engine.
 */
describe.each(await availableEngines())('a bot bundling all of @medplum/core, on %s', (engine) => {
  let server: TestServer;
  let project: string;

  beforeAll(async () => {
    server = await startTestServer(engine);
    project = await botProject({
      'all.ts': `import * as core from '@medplum/core';

export async function handler(): Promise<number> {
  return Object.keys(core).length;
}
`,
    });
  });

  afterAll(async () => {
    await server?.stop();
    if (project) await rm(project, { recursive: true, force: true });
  });

  it('deploys and runs', async () => {
    const run = await graphir(server, project, [
      'bot',
      'deploy',
      'src/all.ts',
      '--identifier',
      'urn:test|all',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const id = run.stdout.trim();
    for (let time = 0; time < 2; time++) {
      const answer = await execute(server, id, {});
      expect(answer.status).toBe(200);
      expect(answer.body).toBeGreaterThan(100);
    }
  });
});

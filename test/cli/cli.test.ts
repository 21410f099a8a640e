/** The `graphir` command, run as a child process against a real server. */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runGraphir, type CliRun } from '../support/graphir-cli.js';
import { ROOT_CLIENT, startTestServer, type TestServer } from '../support/test-server.js';

function graphir(
  args: string[],
  env: Record<string, string> = {},
  stdin?: string,
): Promise<CliRun> {
  return runGraphir(args, { env, ...(stdin === undefined ? {} : { stdin }) });
}

/**
 * Each test starts the command one or more times, a Node process with tsx each: on a loaded
 * machine a start takes seconds, so the tests may take minutes without anything being wrong.
 */
vi.setConfig({ testTimeout: 180_000 });

let server: TestServer;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer('pglite');
  dir = await mkdtemp(join(tmpdir(), 'graphir-cli-'));
  env = {
    GRAPHIR_URL: server.url,
    GRAPHIR_CLIENT_ID: server.project.clientId,
    GRAPHIR_CLIENT_SECRET: server.project.clientSecret,
  };
});

afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// Independent runs of the command: side by side, they take the time of a few.
describe.concurrent('graphir --help', () => {
  const cases: [string[], string[]][] = [
    [[], ['serve', 'generate', 'project', 'client', 'token', 'bot', 'import', 'export']],
    [['serve'], []],
    [['generate'], ['--check']],
    [
      ['project', 'create'],
      ['<name>', '--url', '--client-id', '--client-secret'],
    ],
    [
      ['client', 'create'],
      ['--project', '--name', '--scope'],
    ],
    [['token'], ['--url', '--client-id', '--client-secret']],
    [
      ['bot', 'deploy'],
      ['<file>', '--identifier', '--name'],
    ],
    [
      ['bot', 'execute'],
      ['--identifier', '--input', '--content-type', '--get'],
    ],
    [['import'], ['<path>', '--resume']],
    [['export'], ['--out', '--types']],
  ];
  it.each(cases)('%j --help names its options', async (command, options) => {
    const run = await graphir([...command, '--help']);
    expect(run.code, run.stderr).toBe(0);
    for (const option of options) expect(run.stdout).toContain(option);
  });
});

describe('administration', () => {
  it('creates a project with root credentials, then a token for its client', async () => {
    const created = await graphir(['project', 'create', 'CLI project'], {
      GRAPHIR_URL: server.url,
      GRAPHIR_CLIENT_ID: ROOT_CLIENT.id,
      GRAPHIR_CLIENT_SECRET: ROOT_CLIENT.secret,
    });
    expect(created.code, created.stderr).toBe(0);
    const project = JSON.parse(created.stdout);
    expect(project).toMatchObject({
      projectId: expect.any(String),
      clientId: expect.any(String),
      clientSecret: expect.any(String),
    });

    const client = await graphir(
      ['client', 'create', '--project', project.projectId, '--name', 'reader'],
      {},
    );
    expect(client.code).not.toBe(0);

    const reader = await graphir(
      [
        'client',
        'create',
        '--project',
        project.projectId,
        '--name',
        'reader',
        '--scope',
        'system/Patient.rs',
        '--url',
        server.url,
        '--client-id',
        ROOT_CLIENT.id,
        '--client-secret',
        ROOT_CLIENT.secret,
      ],
      {},
    );
    expect(reader.code, reader.stderr).toBe(0);
    expect(JSON.parse(reader.stdout).clientId).toEqual(expect.any(String));

    const token = await graphir(['token'], {
      GRAPHIR_URL: server.url,
      GRAPHIR_CLIENT_ID: project.clientId,
      GRAPHIR_CLIENT_SECRET: project.clientSecret,
    });
    expect(token.code, token.stderr).toBe(0);
    const accessToken = token.stdout.trim();
    expect(accessToken.split('.')).toHaveLength(3);
    const response = await server.fhir('/Patient', { token: accessToken });
    expect(response.status).toBe(200);
  });
});

describe('bots', () => {
  it('deploys twice under one identifier (same id), then executes by identifier with JSON', async () => {
    const file = join(dir, 'echo.js');
    await writeFile(
      file,
      'export async function handler(fhir, event) { return { version: 1, got: event.input }; }\n',
    );
    const first = await graphir(['bot', 'deploy', file, '--identifier', 'urn:test|echo'], env);
    expect(first.code, first.stderr).toBe(0);
    const id = first.stdout.trim();
    expect(id).toMatch(/\S+/);

    await writeFile(
      file,
      'export async function handler(fhir, event) { return { version: 2, got: event.input }; }\n',
    );
    const second = await graphir(
      ['bot', 'deploy', file, '--identifier', 'urn:test|echo', '--name', 'Echo'],
      env,
    );
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim()).toBe(id);
    const bot = await (await server.fhir(`/Bot/${id}`)).json();
    expect(bot.name).toBe('Echo');
    expect(bot.code).toContain('version: 2');

    const input = join(dir, 'input.json');
    await writeFile(input, JSON.stringify({ hello: 'world' }));
    const executed = await graphir(
      ['bot', 'execute', '--identifier', 'urn:test|echo', '--input', input],
      env,
    );
    expect(executed.code, executed.stderr).toBe(0);
    expect(JSON.parse(executed.stdout)).toEqual({ version: 2, got: { hello: 'world' } });

    const fromStdin = await graphir(['bot', 'execute', id, '--input', '-'], env, '{"a":1}');
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    expect(JSON.parse(fromStdin.stdout)).toEqual({ version: 2, got: { a: 1 } });

    const viaGet = await graphir(['bot', 'execute', id, '--get', 'x=1', 'y=two'], env);
    expect(viaGet.code, viaGet.stderr).toBe(0);
    expect(JSON.parse(viaGet.stdout)).toEqual({ version: 2, got: { x: '1', y: 'two' } });
  });

  it('reports a failing bot in one line and exits 1', async () => {
    const file = join(dir, 'throws.js');
    await writeFile(file, 'exports.handler = async () => { throw new Error("boom\\nsecond"); };\n');
    const deployed = await graphir(['bot', 'deploy', file, '--identifier', 'urn:test|throws'], env);
    expect(deployed.code, deployed.stderr).toBe(0);
    const run = await graphir(['bot', 'execute', '--identifier', 'urn:test|throws'], env);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('boom');
    expect(run.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });
});

describe('import and export', () => {
  const count = 300;
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({
      resourceType: 'Patient',
      ...(index % 3 === 0 ? { id: `cli-import-${index}` } : {}),
      identifier: [{ system: 'urn:cli-import', value: String(index) }],
      name: [{ family: 'Importer', given: [`P${index}`] }],
    }),
  );

  async function familyTotal(family: string): Promise<number> {
    const bundle = await (await server.fhir(`/Patient?family=${family}&_count=1`)).json();
    return bundle.total;
  }

  it('imports NDJSON in chunks, then a search shows the patients', async () => {
    const file = join(dir, 'patients.ndjson');
    await writeFile(file, lines.join('\n') + '\n\n');
    const run = await graphir(['import', file, '--batch-size', '100'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/imported 300 resources .*0 failures/);
    expect(run.stderr).toMatch(/300 resources sent, \d+ resources\/s/);
    expect(await familyTotal('Importer')).toBe(count);
    expect((await server.fhir('/Patient/cli-import-3')).status).toBe(200);
    const state = JSON.parse(await readFile(`${file}.graphir-import`, 'utf8'));
    expect(state).toMatchObject({ complete: true });
  });

  it('--resume skips the lines a partial state file records as done', async () => {
    const file = join(dir, 'resumed.ndjson');
    const resumed = lines.map((line) =>
      line.replaceAll('Importer', 'Resumer').replaceAll('cli-import-', 'cli-resume-'),
    );
    await writeFile(file, resumed.join('\n') + '\n');
    await writeFile(`${file}.graphir-import`, JSON.stringify({ done: 120, complete: false }));
    const run = await graphir(['import', file, '--resume'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/imported 180 resources/);
    expect(await familyTotal('Resumer')).toBe(180);
    expect((await server.fhir('/Patient/cli-resume-0')).status).toBe(404);
    expect((await server.fhir('/Patient/cli-resume-120')).status).toBe(200);

    const again = await graphir(['import', file, '--resume'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/imported 0 resources/);
    expect(await familyTotal('Resumer')).toBe(180);
  });

  it('imports a collection Bundle as POSTs, keeping fullUrl references', async () => {
    const file = join(dir, 'collection.json');
    await writeFile(
      file,
      JSON.stringify({
        resourceType: 'Bundle',
        type: 'collection',
        entry: [
          {
            fullUrl: 'urn:uuid:0b0e0000-0000-4000-8000-000000000001',
            resource: { resourceType: 'Patient', name: [{ family: 'Collected' }] },
          },
          {
            resource: {
              resourceType: 'Observation',
              status: 'final',
              code: { text: 'collected' },
              subject: { reference: 'urn:uuid:0b0e0000-0000-4000-8000-000000000001' },
            },
          },
        ],
      }),
    );
    const run = await graphir(['import', file], env);
    expect(run.code, run.stderr).toBe(0);
    const patients = await (await server.fhir('/Patient?family=Collected')).json();
    expect(patients.total).toBe(1);
    const observations = await (
      await server.fhir(`/Observation?subject=Patient/${patients.entry[0].resource.id}`)
    ).json();
    expect(observations.total).toBe(1);
  });

  it('exports NDJSON per type', async () => {
    const out = join(dir, 'export');
    const run = await graphir(['export', '--out', out, '--types', 'Patient,Bot'], env);
    expect(run.code, run.stderr).toBe(0);
    expect((await readdir(out)).sort()).toEqual(['Bot.ndjson', 'Patient.ndjson']);
    const patients = (await readFile(join(out, 'Patient.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const total = (await (await server.fhir('/Patient?_count=0')).json()).total;
    expect(patients).toHaveLength(total);
    expect(patients.every((patient) => patient.resourceType === 'Patient')).toBe(true);
    expect(new Set(patients.map((patient) => patient.id)).size).toBe(total);
  });
});

describe('failures', () => {
  it('a server that does not answer: one line, exit ≠ 0', async () => {
    const run = await graphir(['token'], { ...env, GRAPHIR_URL: 'http://127.0.0.1:59999' });
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('cannot reach');
  });

  it('a wrong secret: one line, exit ≠ 0', async () => {
    const run = await graphir(['export', '--out', join(dir, 'x')], {
      ...env,
      GRAPHIR_CLIENT_SECRET: 'wrong',
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('invalid_client');
  });

  it('a usage mistake: one line, exit ≠ 0', async () => {
    const run = await graphir(['bot', 'deploy', 'x.js'], env);
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain('identifier');
  });
});

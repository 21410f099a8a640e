/**
 * The README's walk-through cannot rot: its ```sh blocks run here, in order, in one bash, against
 * a real server (blocks marked `sh no-test` — install and start — are left out).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_CLIENT, startTestServer, type TestServer } from '../support/test-server.js';

const run = promisify(execFile);

function walkThroughScript(readme: string): string {
  const section = readme.slice(
    readme.indexOf('## Walk-through'),
    readme.indexOf('\n## ', readme.indexOf('## Walk-through') + 1),
  );
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((match) => match[1]).join('\n');
}

describe('the README walk-through', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite');
  });
  afterAll(() => server?.stop());

  it('runs, every command succeeding', async () => {
    const script = walkThroughScript(readFileSync('README.md', 'utf8'));
    expect(script).toContain('$graphql');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
      env: {
        ...process.env,
        GRAPHIR: server.url,
        ROOT_ID: ROOT_CLIENT.id,
        ROOT_SECRET: ROOT_CLIENT.secret,
      },
      maxBuffer: 16 * 1024 * 1024,
      timeout: 120_000,
    });
    expect(stdout).toContain('"DiagnosticReportList"');
    expect(stdout).toContain('{"hello":{"name":"Eve"}}');
    expect(stdout).toMatch(/MSA\|AA\|MSG0001/);
    expect(stdout).toContain('"name":"Ada"');
  }, 180_000);
});

import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = { id: 'shutdown-root', secret: 'shutdown-root-secret' };
/** Busy for 1.5 s inside the sandbox: a request certainly in flight when SIGTERM arrives. */
const SLOW_BOT = `export async function handler() {
  const end = Date.now() + 1500;
  while (Date.now() < end) {}
  return 'finished';
}`;

describe('graceful shutdown (npm start, SIGTERM)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'graphir-shutdown-'));
  let child: ChildProcess | undefined;
  afterAll(() => {
    if (child?.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('finishes the request in flight, then exits 0', { timeout: 60_000 }, async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
    };
    delete env.DATABASE_URL;
    const started = spawn(process.execPath, ['--import', 'tsx', 'runtime/main.ts'], {
      env: { ...env, GRAPHIR_ROOT_CLIENT_ID: ROOT.id, GRAPHIR_ROOT_CLIENT_SECRET: ROOT.secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let stdout = '';
    let stderr = '';
    started.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      started.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const match = /listening on (http:\/\/\S+)/.exec(stdout);
        if (match) resolve(match[1]!);
      });
      started.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    const exited = once(started, 'exit');

    const post = async (path: string, body: unknown, headers: Record<string, string>) => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers,
        body: body as string,
      });
      return { status: response.status, json: (await response.json()) as Record<string, any> };
    };
    const token = async (clientId: string, clientSecret: string) =>
      (
        await post(
          '/oauth2/token',
          new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: clientId,
            client_secret: clientSecret,
          }),
          {},
        )
      ).json.access_token as string;
    const project = await post('/admin/projects', JSON.stringify({ name: 'Shutdown' }), {
      Authorization: `Bearer ${await token(ROOT.id, ROOT.secret)}`,
      'Content-Type': 'application/json',
    });
    expect(project.status).toBe(201);
    const auth = {
      Authorization: `Bearer ${await token(project.json.clientId, project.json.clientSecret)}`,
    };
    const bot = await post(
      '/fhir/R4/Bot',
      JSON.stringify({ resourceType: 'Bot', name: 'slow', code: SLOW_BOT }),
      { ...auth, 'Content-Type': 'application/fhir+json' },
    );
    expect(bot.status).toBe(201);

    const slow = fetch(`${url}/fhir/R4/Bot/${bot.json.id}/$execute`, { headers: auth });
    await new Promise((resolve) => setTimeout(resolve, 400));
    started.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // No new connections once shutting down.
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();

    const response = await slow;
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('finished');
    const [code] = await exited;
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('"msg":"shutting down"');
    expect(stdout).toMatch(/"route":"\/fhir\/R4\/Bot\/:id\/\$execute".*"status":200/);
  });
});

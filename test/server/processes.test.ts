/**
 * `graphir serve --processes 2` on PostgreSQL, as a real child process: two server processes on
 * one port under a supervisor. What one process does, the other sees (tokens, caches, Bots,
 * jobs); `/metrics` answers for both from either; a process killed outright is replaced while the
 * other serves; SIGTERM lets a request in flight finish before every process exits 0. On the
 * embedded store more than one process is refused at start-up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeLater, waitForTask } from '../jobs/async-helpers.js';
import {
  processStorage,
  ROOT,
  startServerProcess,
  token,
  type ProcessStorage,
  type ServerProcess,
} from '../reliability/server-process.js';
import { runGraphir } from '../support/graphir-cli.js';
import { pinnedClients, type PinnedClient } from '../support/pinned-clients.js';
import { postgresUrl, withDatabase } from '../support/postgres-admin.js';
import { availableEngines } from '../support/test-databases.js';

const engines = await availableEngines();
/** The bound the other process is held to for a change it must hear of (a notice: milliseconds). */
const NOTICE_BOUND_MS = 500;

/** Whether a process with this id still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(50);
  }
}

const version = (tag: string) => `export async function handler() { return '${tag}'; }`;

describe('more than one process on the embedded store', () => {
  it('is refused at start-up, saying why', { timeout: 60_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'graphir-processes-'));
    try {
      const run = await runGraphir(['serve', '--processes', '2'], {
        env: { DATA_DIR: dataDir, PORT: '0' },
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('GRAPHIR_PROCESSES (--processes) is 2');
      expect(run.stderr).toContain('the embedded store (PGlite, no DATABASE_URL)');
      expect(run.stdout).not.toContain('listening');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe.runIf(engines.includes('postgres'))('a process that cannot start', () => {
  it(
    'stops every process, and the supervisor exits 1 saying why',
    { timeout: 60_000 },
    async () => {
      const missing = withDatabase((await postgresUrl())!, 'graphir_no_such_database');
      const run = await runGraphir(['serve', '--processes', '2'], {
        env: { DATABASE_URL: missing, PORT: '0', HOST: '127.0.0.1' },
      });
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(
        /process \d+ failed to start: database "graphir_no_such_database" does not exist/,
      );
      expect(run.stderr).toMatch(
        /Graphir shutting down \(process \d+ failed to start \(exit code 1\)\)/,
      );
      expect(run.stdout).not.toContain('listening');
    },
  );
});

describe.runIf(engines.includes('postgres'))('graphir serve --processes 2 on PostgreSQL', () => {
  let storage: ProcessStorage;
  let server: ServerProcess;
  let project: { projectId: string; clientId: string; clientSecret: string; token: string };
  let first: PinnedClient;
  let second: PinnedClient;
  const rootToken = () => token(server.url, ROOT.id, ROOT.secret);

  beforeAll(async () => {
    storage = await processStorage('postgres');
    server = await startServerProcess(storage.env, ['serve', '--processes', '2']);
    const created = await fetch(`${server.url}/admin/projects`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${await rootToken()}` },
      body: JSON.stringify({ name: 'Processes' }),
    });
    expect(created.status).toBe(201);
    const { projectId, clientId, clientSecret } = (await created.json()) as Record<string, string>;
    project = {
      projectId,
      clientId,
      clientSecret,
      token: await token(server.url, clientId, clientSecret),
    };
    [first, second] = await pinnedClients(server.url, 2, project.token);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await server?.kill('SIGKILL');
    await storage?.remove();
  });

  it('serves from two processes on one port, each under the supervisor', () => {
    expect(first.pid).not.toBe(second.pid);
    expect([first.pid, second.pid]).not.toContain(server.child.pid);
    expect(server.output().match(/listening on/g)).toHaveLength(1);
    expect(server.output()).toContain('with 2 processes');
  });

  it('accepts on one process a token the other issued', async () => {
    const issued = await first.call('/oauth2/token', {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: project.clientId,
        client_secret: project.clientSecret,
      }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      token: null,
    });
    expect(issued.status).toBe(200);
    const { access_token } = await issued.json();
    expect((await second.fhir('/Patient', { token: access_token })).status).toBe(200);
  });

  it('reads on one process what the other wrote, at once', async () => {
    const created = await first.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient', name: [{ family: 'Across' }] },
    });
    expect(created.status).toBe(201);
    const { id } = await created.json();
    // The second process reads it, and may keep it.
    expect((await (await second.fhir(`/Patient/${id}`)).json()).meta.versionId).toBe('1');
    const updated = await first.fhir(`/Patient/${id}`, {
      method: 'PUT',
      body: { resourceType: 'Patient', id, name: [{ family: 'Changed' }] },
    });
    expect(updated.status).toBe(200);
    const read = await (await second.fhir(`/Patient/${id}`)).json();
    expect(read.meta.versionId).toBe('2');
    expect(read.name[0].family).toBe('Changed');
    const found = await (await second.fhir('/Patient?name=changed')).json();
    expect(found.entry.map((entry: { resource: { id: string } }) => entry.resource.id)).toEqual([
      id,
    ]);
  });

  it(`stops a client deleted through one process on the other within ${NOTICE_BOUND_MS} ms`, async () => {
    const root = await rootToken();
    const created = await first.call(`/admin/projects/${project.projectId}/clients`, {
      method: 'POST',
      body: { name: 'doomed', scope: 'system/*.cruds' },
      token: root,
    });
    expect(created.status).toBe(201);
    const { clientId, clientSecret } = await created.json();
    const doomed = await token(server.url, clientId, clientSecret);
    // Seen alive by the second process, which keeps that in memory.
    expect((await second.fhir('/Patient', { token: doomed })).status).toBe(200);
    const deleted = await first.call(`/admin/projects/${project.projectId}/clients/${clientId}`, {
      method: 'DELETE',
      token: root,
    });
    expect(deleted.status).toBe(204);
    await sleep(NOTICE_BOUND_MS);
    expect((await second.fhir('/Patient', { token: doomed })).status).toBe(401);
  });

  it('runs on one process the Bot version the other just wrote', async () => {
    const created = await first.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', code: version('v1') },
    });
    const { id } = await created.json();
    const execute = async () =>
      (await second.fhir(`/Bot/${id}/$execute`, { method: 'POST', body: {} })).text();
    expect(await execute()).toBe('v1');
    const updated = await first.fhir(`/Bot/${id}`, {
      method: 'PUT',
      body: { resourceType: 'Bot', id, code: version('v2') },
    });
    expect(updated.status).toBe(200);
    expect(await execute()).toBe('v2');
  });

  it('completes a respond-async job enqueued through either process', async () => {
    const created = await first.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', code: version('later') },
    });
    const { id } = await created.json();
    for (const [enqueuer, reader] of [
      [first, second],
      [second, first],
    ]) {
      const task = await waitForTask(reader, await executeLater(enqueuer, id, {}));
      expect(task.status).toBe('completed');
    }
  });

  it("answers /metrics from either process with both processes' requests", async () => {
    const healthz =
      /^graphir_http_requests_total\{method="GET",route="\/healthz",status="200"\} (\d+)$/m;
    const count = async (client: PinnedClient) =>
      Number(healthz.exec(await (await client.call('/metrics')).text())?.[1] ?? 0);
    const before = await count(first);
    for (let i = 0; i < 3; i++) expect((await first.call('/healthz')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await second.call('/healthz')).status).toBe(200);
    expect(await count(second)).toBe(before + 5);
    expect(await count(first)).toBe(before + 5);
  });

  it('replaces a process killed outright while the other serves', { timeout: 60_000 }, async () => {
    const killed = first.pid;
    process.kill(killed, 'SIGKILL');
    await until('the killed process is gone', () => !alive(killed));
    await first.close();
    // The supervisor hands new connections to the process left until the replacement listens.
    await sleep(200);
    for (let i = 0; i < 10; i++) {
      const [client] = await pinnedClients(server.url, 1, project.token);
      expect((await client.fhir('/Patient?_count=1')).status).toBe(200);
      await client.close();
    }
    await until('a replacement serves', async () => {
      const clients = await pinnedClients(server.url, 2, project.token).catch(() => []);
      const pids = clients.map((client) => client.pid);
      await Promise.all(clients.map((client) => client.close()));
      return pids.length === 2 && !pids.includes(killed) && pids.includes(second.pid);
    });
    const both = await pinnedClients(server.url, 2, project.token);
    first = both.find((client) => client.pid !== second.pid)!;
    await both.find((client) => client.pid === second.pid)!.close();
    expect((await first.fhir('/Patient?_count=1')).status).toBe(200);
  });

  it(
    'on SIGTERM lets a request in flight finish, then every process exits 0',
    { timeout: 60_000 },
    async () => {
      const created = await second.fhir('/Bot', {
        method: 'POST',
        body: {
          resourceType: 'Bot',
          code: `export async function handler() {
          await new Promise((resolve) => setTimeout(resolve, 1500));
          return 'finished';
        }`,
        },
      });
      const { id } = await created.json();
      const inFlight = second.fhir(`/Bot/${id}/$execute`, { method: 'POST', body: {} });
      await sleep(300);
      const exited = server.kill('SIGTERM');
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(await answer.text()).toBe('finished');
      expect(await exited).toBe(0);
      expect(alive(first.pid)).toBe(false);
      expect(alive(second.pid)).toBe(false);
    },
  );
});

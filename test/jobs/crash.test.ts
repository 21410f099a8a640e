/**
 * The queue across real server processes: kill -9 during a respond-async execution, then a
 * restart, on each engine → the Task is completed, never left in-progress; two processes on one
 * PostgreSQL database → 50 executions sent to both each complete exactly once, and when one
 * process is killed mid-way the other finishes its jobs (through the liveness sweep).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';
import {
  createProject,
  processStorage,
  startServerProcess,
  token,
  type ProcessStorage,
  type ServerProcess,
} from '../reliability/server-process.js';
import {
  createBot,
  executeLater,
  taskResult,
  waitForTask,
  type FhirCaller,
} from './async-helpers.js';

const engines = await availableEngines();
/** Both processes take tokens for this address, as processes behind one load balancer. */
const PUBLIC_URL = 'http://graphir.test';
const SYSTEM = 'urn:graphir:job-test';

/**
 * Busy for `input.ms`, then writes one Basic named by `input.n` (the side effect counted), and
 * answers `input.n`.
 */
const SIDE_EFFECT_BOT = `export async function handler(fhir, event) {
  const end = Date.now() + (event.input.ms || 0);
  while (Date.now() < end) {}
  await fhir.createResource({ resourceType: 'Basic', code: { text: 'job test' }, identifier: [{ system: '${SYSTEM}', value: String(event.input.n) }] });
  return event.input.n;
}`;

function caller(server: ServerProcess, bearer: string): FhirCaller {
  return {
    fhir: (path, init = {}) =>
      fetch(`${server.url}/fhir/R4${path}`, {
        method: init.method ?? 'GET',
        headers: {
          Authorization: bearer,
          'Content-Type': 'application/fhir+json',
          ...init.headers,
        },
        ...(init.body === undefined
          ? {}
          : { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }),
      }),
  };
}

/** How many Basic side effects each n has. */
async function sideEffects(server: FhirCaller): Promise<Map<string, number>> {
  const bundle = await (await server.fhir(`/Basic?_count=1000&identifier=${SYSTEM}|`)).json();
  const counts = new Map<string, number>();
  for (const entry of bundle.entry ?? []) {
    const n = entry.resource.identifier[0].value as string;
    counts.set(n, (counts.get(n) ?? 0) + 1);
  }
  return counts;
}

async function statuses(server: FhirCaller, taskId: string): Promise<string[]> {
  const history = await (await server.fhir(`/Task/${taskId}/_history`)).json();
  return history.entry.map((entry: any) => entry.resource.status).reverse();
}

async function inProgress(server: FhirCaller, taskId: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const task = await (await server.fhir(`/Task/${taskId}`)).json();
    if (task.status === 'in-progress') return;
    await sleep(50);
  }
  throw new Error(`Task/${taskId} never started`);
}

describe.each(engines)('kill -9 during a respond-async execution (%s)', (engine) => {
  let storage: ProcessStorage | undefined;
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.kill('SIGKILL');
    await storage?.remove();
  });

  it('runs the job again after a restart (the Task completes), or fails the Task when that was its last attempt', async () => {
    storage = await processStorage(engine);
    const env = {
      ...storage.env,
      GRAPHIR_BASE_URL: PUBLIC_URL,
      GRAPHIR_JOBS_POLL_INTERVAL_MS: '200',
    };
    server = await startServerProcess(env);
    const project = await createProject(server.url, 'Jobs');
    let fhir = caller(server, `Bearer ${project.token}`);
    const botId = await createBot(fhir, SIDE_EFFECT_BOT);
    const taskId = await executeLater(fhir, botId, { n: 1, ms: 3_000 });
    await inProgress(fhir, taskId);
    expect(await server.kill('SIGKILL')).toBe('SIGKILL');

    server = await startServerProcess(env);
    fhir = caller(
      server,
      `Bearer ${await token(server.url, project.clientId, project.clientSecret)}`,
    );
    const task = await waitForTask(fhir, taskId, 60_000);
    expect(task.status).toBe('completed');
    expect(taskResult(task).body).toBe(1);
    // The killed attempt left the Task in-progress; the second one ran it to the end.
    expect(await statuses(fhir, taskId)).toEqual([
      'requested',
      'in-progress',
      'in-progress',
      'completed',
    ]);
    expect(task.note).toEqual([{ text: 'Attempt 2' }]);

    // With one attempt allowed, a killed attempt was the last: after a restart, failed and why.
    const once = { ...env, GRAPHIR_JOBS_MAX_ATTEMPTS: '1' };
    await server.kill('SIGKILL');
    server = await startServerProcess(once);
    fhir = caller(
      server,
      `Bearer ${await token(server.url, project.clientId, project.clientSecret)}`,
    );
    const lastTaskId = await executeLater(fhir, botId, { n: 2, ms: 3_000 });
    await inProgress(fhir, lastTaskId);
    await server.kill('SIGKILL');
    server = await startServerProcess(once);
    fhir = caller(
      server,
      `Bearer ${await token(server.url, project.clientId, project.clientSecret)}`,
    );
    const failed = await waitForTask(fhir, lastTaskId, 60_000);
    expect(failed.status).toBe('failed');
    expect(failed.statusReason.text).toBe(
      'The process running its last attempt stopped before the attempt ended',
    );
    expect(taskResult(failed).body).toMatchObject({
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'exception' }],
    });
  }, 180_000);
});

describe.runIf(engines.includes('postgres'))('two processes on one PostgreSQL database', () => {
  let database: TestDatabase | undefined;
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const server of servers) await server.kill('SIGKILL');
    await database?.drop();
  });

  it('runs each job once, and finishes a killed process’s jobs', async () => {
    database = await createTestDatabase('postgres');
    const env = {
      DATABASE_URL: database.url,
      GRAPHIR_BASE_URL: PUBLIC_URL,
      GRAPHIR_JOBS_POLL_INTERVAL_MS: '200',
      GRAPHIR_JOBS_CONCURRENCY: '4',
    };
    servers.push(await startServerProcess(env), await startServerProcess(env));
    const project = await createProject(servers[0].url, 'Jobs');
    const bearer = `Bearer ${project.token}`;
    const [a, b] = servers.map((server) => caller(server, bearer));
    const botId = await createBot(a, SIDE_EFFECT_BOT);

    // 50 executions, asked of both processes in turn: each Task completed exactly once.
    const tasks = await Promise.all(
      Array.from({ length: 50 }, (_, n) => executeLater(n % 2 ? b : a, botId, { n })),
    );
    for (const [n, taskId] of tasks.entries()) {
      const task = await waitForTask(n % 2 ? a : b, taskId, 60_000);
      expect(taskResult(task).body).toBe(n);
      expect(await statuses(a, taskId)).toEqual(['requested', 'in-progress', 'completed']);
    }
    const once = await sideEffects(a);
    expect([...once.keys()].sort()).toEqual(tasks.map((_, n) => String(n)).sort());
    expect([...once.values()].every((count) => count === 1)).toBe(true);

    // 20 slower ones; process A is killed while running some: B releases and runs them.
    const slow = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        executeLater(i % 2 ? b : a, botId, { n: 100 + i, ms: 500 }),
      ),
    );
    await sleep(1_000);
    await servers[0].kill('SIGKILL');
    for (const taskId of slow)
      expect((await waitForTask(b, taskId, 60_000)).status).toBe('completed');
    const after = await sideEffects(b);
    const counts = slow.map((_, i) => after.get(String(100 + i)) ?? 0);
    expect(counts.every((count) => count >= 1)).toBe(true);
    // Only the jobs A was running when killed may have run twice: at most its concurrency.
    expect(counts.filter((count) => count > 1).length).toBeLessThanOrEqual(4);
  }, 180_000);
});

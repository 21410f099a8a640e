/**
 * Bot executions are shared fairly between projects (runtime/bots/project-scheduler.ts): a
 * project runs at most GRAPHIR_BOT_PROJECT_CONCURRENCY executions at once and queues at most
 * GRAPHIR_BOT_PROJECT_QUEUE more, past which it gets 429 with Retry-After; and while one project
 * fills its share with bots that loop until their time limit, another project's bot is answered
 * before any of them ends: it never waits behind the other project's queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProjectScheduler } from '../../runtime/bots/project-scheduler.js';
import { FhirError } from '../../runtime/model/fhir-error.js';
import { startTestServer, type Project, type TestServer } from '../support/test-server.js';

const LOOP = 'export async function handler() { for (;;) {} }';
const ECHO = 'export async function handler(fhir, event) { return event.input; }';

describe('ProjectScheduler', () => {
  it('runs at most `concurrency` of a project, queues `queued`, refuses the rest', async () => {
    const scheduler = new ProjectScheduler({ concurrency: 2, queued: 1 });
    const releases: (() => void)[] = [];
    const started: number[] = [];
    const work = (n: number) => () =>
      new Promise<number>((resolve) => {
        started.push(n);
        releases.push(() => resolve(n));
      });
    const runs = [0, 1, 2].map((n) => scheduler.run('x', work(n)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1]);
    expect(scheduler.load('x')).toEqual({ running: 2, waiting: 1 });
    const refused = await scheduler.run('x', work(3)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(FhirError);
    expect((refused as FhirError).status).toBe(429);
    expect((refused as FhirError).headers['Retry-After']).toBe('1');
    // Another project is not held by this one's queue.
    const other = scheduler.run('y', work(10));
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 10]);
    releases.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1, 10, 2]);
    for (const release of releases.splice(0)) release();
    expect(await Promise.all([...runs, other])).toEqual([0, 1, 2, 10]);
    expect(scheduler.load('x')).toEqual({ running: 0, waiting: 0 });
  });
});

describe('bot executions across projects', () => {
  let server: TestServer;
  let flooder: Project;
  let loopId: string;
  let echoId: string;

  const createBot = async (code: string, token: string) => {
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', code, timeout: 3 },
      token,
    });
    expect(response.status).toBe(201);
    return (await response.json()).id as string;
  };
  const execute = (id: string, token: string) =>
    server.fhir(`/Bot/${id}/$execute`, {
      method: 'POST',
      body: 'x',
      headers: { 'Content-Type': 'text/plain' },
      token,
    });

  beforeAll(async () => {
    server = await startTestServer('pglite', {
      GRAPHIR_BOT_WORKERS: '2',
      GRAPHIR_BOT_PROJECT_CONCURRENCY: '1',
      GRAPHIR_BOT_PROJECT_QUEUE: '2',
    });
    flooder = await server.createProject('Flooder');
    loopId = await createBot(LOOP, flooder.token);
    echoId = await createBot(ECHO, server.project.token);
    // A first run of each, so that both workers are up.
    await Promise.all([
      execute(echoId, server.project.token),
      execute(echoId, server.project.token),
    ]);
  });
  afterAll(() => server?.stop());

  it("answers another project's bot while one project floods its share", async () => {
    const ended: string[] = [];
    const floods = Array.from({ length: 5 }, async (_, n) => {
      const response = await execute(loopId, flooder.token);
      ended.push(`loop ${n}`);
      return response;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const echo = await execute(echoId, server.project.token);
    ended.push('echo');
    expect(echo.status).toBe(200);
    expect(await echo.text()).toBe('x');
    const responses = await Promise.all(floods);
    // One ran, two waited, two were refused: 429 with Retry-After, at once.
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([408, 408, 408, 429, 429]);
    for (const refused of responses.filter((r) => r.status === 429))
      expect(refused.headers.get('retry-after')).toBe('1');
    // The echo came before any loop ran out of time.
    const firstLoopEnded = ended.findIndex(
      (name) => name.startsWith('loop') && responses[Number(name.split(' ')[1])].status === 408,
    );
    expect(ended.indexOf('echo')).toBeLessThan(firstLoopEnded);
  }, 60_000);
});

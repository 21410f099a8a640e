/**
 * `Prefer: respond-async` on `$execute` through the durable job queue, over HTTP, on each engine:
 * the Task goes requested → in-progress → completed with the bot's output, or failed with the
 * OperationOutcome the synchronous call would have answered; /metrics shows the queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines, type Engine } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createBot, executeLater, taskResult, waitForTask } from './async-helpers.js';

const engines = await availableEngines();

describe.each(engines)('Prefer: respond-async (%s)', (engine: Engine) => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  it('answers 202 with a Task that completes with the bot’s output', async () => {
    const botId = await createBot(
      server,
      `export async function handler(fhir, event) { return { got: event.input, requester: event.requester.reference }; }`,
    );
    const taskId = await executeLater(server, botId, { n: 1 });
    const task = await waitForTask(server, taskId);
    expect(task).toMatchObject({ status: 'completed', focus: { reference: `Bot/${botId}` } });
    expect(task.executionPeriod.start <= task.executionPeriod.end).toBe(true);
    expect(taskResult(task)).toEqual({
      contentType: 'application/json',
      body: { got: { n: 1 }, requester: `ClientApplication/${server.project.clientId}` },
    });
    // requested (stored with its job) → in-progress (an attempt started) → completed.
    const history = await (await server.fhir(`/Task/${taskId}/_history`)).json();
    const statuses = history.entry.map((entry: any) => entry.resource.status).reverse();
    expect(statuses).toEqual(['requested', 'in-progress', 'completed']);
  });

  it('keeps a string answer as text', async () => {
    const botId = await createBot(
      server,
      `export async function handler(fhir, event) { return 'hello ' + event.input; }`,
    );
    const response = await server.fhir(`/Bot/${botId}/$execute`, {
      method: 'POST',
      body: 'world',
      headers: { 'Content-Type': 'text/plain', Prefer: 'respond-async' },
    });
    expect(response.status).toBe(202);
    const taskId = response.headers.get('content-location')!.split('/').pop()!;
    expect(taskResult(await waitForTask(server, taskId))).toEqual({
      contentType: 'text/plain',
      body: 'hello world',
    });
  });

  it('fails the Task with the OperationOutcome when the bot throws', async () => {
    const botId = await createBot(
      server,
      `export async function handler() { throw new Error('no such patient'); }`,
    );
    const task = await waitForTask(server, await executeLater(server, botId, {}));
    expect(task.status).toBe('failed');
    expect(task.statusReason.text).toBe('no such patient');
    const { contentType, body } = taskResult(task);
    expect(contentType).toBe('application/fhir+json');
    // As the synchronous call answers: the message, then the stack as information.
    expect(body).toMatchObject({
      resourceType: 'OperationOutcome',
      issue: [
        { severity: 'error', code: 'processing', diagnostics: 'no such patient' },
        { severity: 'information', code: 'informational' },
      ],
    });
  });

  it('fails the Task with a timeout outcome when the bot runs past its limit', async () => {
    const botId = await createBot(server, `export async function handler() { while (true) {} }`, {
      timeout: 1,
    });
    const task = await waitForTask(server, await executeLater(server, botId, {}));
    expect(task.status).toBe('failed');
    expect(taskResult(task).body).toMatchObject({ issue: [{ code: 'timeout' }] });
  });

  it('runs the version of the bot that was current when asked', async () => {
    const botId = await createBot(server, `export async function handler() { return 'v1'; }`);
    const taskId = await executeLater(server, botId, {});
    await server.fhir(`/Bot/${botId}`, {
      method: 'PUT',
      body: {
        resourceType: 'Bot',
        id: botId,
        name: 'test',
        code: `export async function handler() { return 'v2'; }`,
      },
    });
    expect(taskResult(await waitForTask(server, taskId)).body).toBe('v1');
  });

  it('reports the queue in /metrics', async () => {
    const botId = await createBot(server, `export async function handler() { return 1; }`);
    await waitForTask(server, await executeLater(server, botId, {}));
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toMatch(/^graphir_jobs_queued\{kind="bot-execution"\} 0$/m);
    expect(text).toMatch(/^graphir_jobs_running\{kind="bot-execution"\} 0$/m);
    expect(text).toMatch(/^graphir_job_wait_seconds_count\{kind="bot-execution"\} [1-9]/m);
    expect(text).toMatch(
      /^graphir_job_attempts_total\{kind="bot-execution",outcome="completed"\} [1-9]/m,
    );
  });
});

/** Bots, `Prefer: respond-async` executions and their Tasks, for the job tests. */
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';

/** What the tests need of a server: FHIR calls with a token (TestServer, PeerServer). */
export interface FhirCaller {
  fhir(
    path: string,
    init?: { method?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; headers: Headers; json(): Promise<any> }>;
}

export async function createBot(
  server: FhirCaller,
  code: string,
  extra: object = {},
): Promise<string> {
  const response = await server.fhir('/Bot', {
    method: 'POST',
    body: { resourceType: 'Bot', name: 'test', code, ...extra },
  });
  const body = await response.json();
  if (response.status !== 201) throw new Error(JSON.stringify(body));
  return body.id as string;
}

/** `$execute` with `Prefer: respond-async`: the Task's id. */
export async function executeLater(
  server: FhirCaller,
  botId: string,
  input: unknown,
): Promise<string> {
  const response = await server.fhir(`/Bot/${botId}/$execute`, {
    method: 'POST',
    body: JSON.stringify(input),
    headers: { 'Content-Type': 'application/json', Prefer: 'respond-async' },
  });
  expect(response.status).toBe(202);
  const location = response.headers.get('content-location')!;
  expect(location).toMatch(/\/fhir\/R4\/Task\/[^/]+$/);
  return location.split('/').pop()!;
}

/** The Task once it is completed or failed; fails the test after `timeoutMs`. */
export async function waitForTask(
  server: FhirCaller,
  taskId: string,
  timeoutMs = 30_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await (await server.fhir(`/Task/${taskId}`)).json();
    if (task.status === 'completed' || task.status === 'failed') return task;
    if (Date.now() > deadline)
      throw new Error(`Task/${taskId} is still ${task.status} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** The Task's output: its media type and its body (parsed when JSON). */
export function taskResult(task: any): { contentType: string; body: unknown } {
  const { contentType, data } = task.output[0].valueAttachment;
  const text = Buffer.from(data, 'base64').toString('utf8');
  return { contentType, body: /json/.test(contentType) ? JSON.parse(text) : text };
}

/**
 * Shared pieces of the hostile-input tests (test/reliability/hostile-*.test.ts, not a test file
 * itself): fast-check runs that report their seed and how many inputs they tried, requests that
 * fail the test instead of hanging, and the checks every refusal must pass.
 *
 * Each property runs with a fresh random seed and prints it. `FC_SEED=<n>` replays a run with
 * that seed; `FC_RUNS=<n>` makes every property try n inputs instead of its default (more for a
 * long local fuzzing session, fewer for a quick look).
 */
import { request as httpRequest } from 'node:http';
import { Worker } from 'node:worker_threads';
import fc from 'fast-check';
import { expect } from 'vitest';

/** Far above any answer here (tens of milliseconds): reaching it means the server hangs. */
export const REQUEST_TIMEOUT_MS = 15_000;

/** An answer read whole: status, headers, the text and, when it is JSON, the parsed body. */
export interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly headers: Headers;
  readonly text: string;
  readonly body: any;
}

export interface SendInit {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Uint8Array;
}

/**
 * The server runs in this process: a request that blocks its event loop (a loop that never
 * ends) blocks every timer here too, AbortSignal's and vitest's. So a watchdog thread, whose
 * timers keep running, reports such a request on stderr and kills the process — the test file
 * fails instead of hanging. Requests that merely wait are failed by AbortSignal, before it.
 */
const WATCHDOG_GRACE_MS = 10_000;
let watchdog: Worker | undefined;
let requestCount = 0;

async function watched<T>(what: string, request: () => Promise<T>): Promise<T> {
  watchdog ??= startWatchdog();
  const id = ++requestCount;
  const deadline = Date.now() + REQUEST_TIMEOUT_MS + WATCHDOG_GRACE_MS;
  watchdog.postMessage({ id, deadline, what });
  try {
    return await request();
  } finally {
    watchdog.postMessage({ id, done: true });
  }
}

function startWatchdog(): Worker {
  const source = `
    const { parentPort } = require('node:worker_threads');
    const { writeSync } = require('node:fs');
    const pending = new Map();
    let note = '';
    parentPort.on('message', (m) => {
      if (m.note !== undefined) note = m.note;
      else if (m.done) pending.delete(m.id);
      else pending.set(m.id, m);
    });
    setInterval(() => {
      for (const m of pending.values()) {
        if (Date.now() < m.deadline) continue;
        const line = '[hostile] A hang: no answer to ' + m.what + (note && ' in ' + note);
        writeSync(2, line + ', and the event loop is blocked; killing the test process.' + String.fromCharCode(10));
        process.kill(process.pid, 'SIGKILL');
      }
    }, 500).unref();`;
  // No inherited execArgv: a loader hook (tsx) would make the thread wait on this one to start.
  const worker = new Worker(source, { eval: true, execArgv: [] });
  worker.unref();
  return worker;
}

/** fetch under a deadline: a request the server does not answer in time fails the test. */
export async function send(url: string, init: SendInit = {}): Promise<Answer> {
  const what = `${init.method ?? 'GET'} ${url.slice(0, 200)}`;
  return watched(what, () => sendUnwatched(url, init, what));
}

async function sendUnwatched(url: string, init: SendInit, what: string): Promise<Answer> {
  try {
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      headers: init.headers,
      body: init.body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    return answer(response.status, response.headers, await response.text());
  } catch (error) {
    throw hangOr(error, what);
  }
}

/**
 * node:http, for what fetch will not send: a path with `..` segments as written (fetch resolves
 * them), and header values with bytes above 0x7f (a latin1 string here is sent byte for byte).
 */
export function sendRaw(
  origin: string,
  path: string,
  init: SendInit & { headers?: Record<string, string> } = {},
): Promise<Answer> {
  const what = `${init.method ?? 'GET'} ${path.slice(0, 200)}`;
  return watched(what, () => sendRawUnwatched(origin, path, init, what));
}

function sendRawUnwatched(
  origin: string,
  path: string,
  init: SendInit,
  what: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      origin,
      {
        method: init.method ?? 'GET',
        path,
        headers: init.headers,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => reject(hangOr(error, what)));
        response.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers))
            if (value !== undefined) headers.set(name, String(value));
          resolve(answer(response.statusCode ?? 0, headers, Buffer.concat(chunks).toString()));
        });
      },
    );
    request.on('error', (error) => reject(hangOr(error, what)));
    request.end(init.body);
  });
}

function answer(status: number, headers: Headers, text: string): Answer {
  const contentType = headers.get('content-type') ?? '';
  let body: unknown;
  if (/json/.test(contentType)) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  return { status, contentType, headers, text, body };
}

function hangOr(error: unknown, what: string): unknown {
  const name = (error as { name?: string }).name;
  return name === 'TimeoutError' || name === 'AbortError'
    ? new Error(`No answer within ${REQUEST_TIMEOUT_MS} ms (a hang): ${what}`)
    : error;
}

/** A refusal as FHIR REST makes it: a 4xx (one of `statuses` when given) with an OperationOutcome. */
export function expectOutcome(answer: Answer, statuses?: readonly number[]): void {
  const context = `${answer.status} ${answer.text.slice(0, 300)}`;
  if (statuses) expect(statuses, context).toContain(answer.status);
  expect(answer.status, context).toBeGreaterThanOrEqual(400);
  expect(answer.status, context).toBeLessThan(500);
  expect(answer.contentType, context).toMatch(/^application\/fhir\+json/);
  expect(answer.body?.resourceType, context).toBe('OperationOutcome');
  expect(answer.body.issue.length, context).toBeGreaterThan(0);
  expect(answer.body.issue[0].severity, context).toBe('error');
}

/** A GraphQL refusal before anything ran: 400, `errors` each with an OperationOutcome, no `data`. */
export function expectGraphQLRefusal(answer: Answer): void {
  const context = `${answer.status} ${answer.text.slice(0, 300)}`;
  expect(answer.status, context).toBe(400);
  expect(answer.contentType, context).toMatch(/^application\/json/);
  expect(answer.body, context).not.toHaveProperty('data');
  expectGraphQLErrors(answer);
}

/** Every GraphQL error has a message and an OperationOutcome, and none is an internal error. */
export function expectGraphQLErrors(answer: Answer): void {
  const context = `${answer.status} ${answer.text.slice(0, 300)}`;
  expect(Array.isArray(answer.body?.errors), context).toBe(true);
  expect(answer.body.errors.length, context).toBeGreaterThan(0);
  for (const error of answer.body.errors) {
    expect(typeof error.message, context).toBe('string');
    expect(error.extensions?.resource?.resourceType, context).toBe('OperationOutcome');
    expect(error.message, context).not.toMatch(/^Internal( server)? error$/);
    for (const issue of error.extensions.resource.issue)
      expect(issue.code, context).not.toBe('exception');
  }
}

/** How the inputs of one property were answered, by kind ("refused 400", "stored", …). */
export class Tally {
  private readonly counts = new Map<string, number>();

  add(kind: string): void {
    this.counts.set(kind, this.count(kind) + 1);
  }

  count(kind: string): number {
    return this.counts.get(kind) ?? 0;
  }

  toString(): string {
    return [...this.counts].map(([kind, n]) => `${n} ${kind}`).join(', ');
  }
}

const envSeed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const envRuns = process.env.FC_RUNS === undefined ? undefined : Number(process.env.FC_RUNS);

/**
 * Checks `check` on `runs` inputs drawn from `arbitrary` (shrinking to a smallest failing input
 * when one fails), then prints how many inputs were tried, how they were answered and the seed.
 */
export async function tryInputs<T>(
  label: string,
  arbitrary: fc.Arbitrary<T>,
  check: (input: T, tally: Tally) => Promise<void>,
  runs: number,
): Promise<Tally> {
  const seed = envSeed ?? Math.floor(Math.random() * 0x7fffffff);
  // Should a hang kill the process, the watchdog names the property and its seed.
  (watchdog ??= startWatchdog()).postMessage({ note: `${label}, FC_SEED=${seed}` });
  const tally = new Tally();
  let tried = 0;
  try {
    await fc.assert(
      fc.asyncProperty(arbitrary, async (input) => {
        tried++;
        await check(input, tally);
      }),
      { numRuns: envRuns ?? runs, seed },
    );
  } finally {
    watchdog.postMessage({ note: '' });
    console.log(`[hostile] ${label}: ${tried} inputs tried (${tally}); FC_SEED=${seed}`);
  }
  return tally;
}

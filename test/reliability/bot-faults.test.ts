/**
 * Bots that crash, hang or exhaust memory, run again and again beside steady REST and GraphQL
 * traffic and a healthy echo bot: each faulty execution is answered as the contract says (throws
 * → 400 `processing`, time limit → 408 `timeout`, memory limit → 400 `too-costly`), every other
 * request and every echo succeeds, and the server's memory stays bounded. (How long the others
 * wait meanwhile is a figure for the benches, not a test: docs/performance.md.)
 *
 * Two clients cycle through the faulty bots, so that with the default pool (one worker per core)
 * a bot waits for at most one execution ahead of it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** GRAPHIR_BOT_TIMEOUT_SECONDS: the time limit of the bots that hang. */
const TIMEOUT_SECONDS = 1;
const MEMORY_MB = 16;
/** The time limit of the bots that exhaust memory: the memory limit must come long before it. */
const MEMORY_BOT_TIMEOUT_SECONDS = 10;
const LOAD_MS = 6_000;
/** Concurrent REST and GraphQL clients, and clients cycling through the faulty bots. */
const CLIENTS = 4;
const FAULT_CLIENTS = 2;
/** How much the process may grow (a bot past a 16 MB limit once took 1.5 GB per worker). */
const RSS_GROWTH_MB = 600;

interface Fault {
  readonly code: string;
  /** Bot.timeout in seconds; GRAPHIR_BOT_TIMEOUT_SECONDS when absent. */
  readonly timeout?: number;
  readonly status: number;
  readonly issue: string;
  readonly diagnostics: RegExp;
}

const handler = (body: string) => `export async function handler(fhir, event) { ${body} }`;
const processing = (diagnostics: RegExp) => ({ status: 400, issue: 'processing', diagnostics });
const timedOut = { status: 408, issue: 'timeout', diagnostics: /time limit/ };
const outOfMemory = {
  timeout: MEMORY_BOT_TIMEOUT_SECONDS,
  status: 400,
  issue: 'too-costly',
  diagnostics: /memory limit/,
};

const FAULTS: Record<string, Fault> = {
  throws: { code: handler('throw new Error("boom " + event.input);'), ...processing(/boom x/) },
  'rejects after a fhir call': {
    code: handler(
      'await fhir.searchResources("Patient", { _count: "1" }); return Promise.reject(new Error("rejected"));',
    ),
    ...processing(/rejected/),
  },
  'overflows its stack': {
    code: handler('const f = (n) => f(n + 1) + 1; return f(0);'),
    ...processing(/stack overflow/),
  },
  'loops forever': { code: handler('for (;;) {}'), ...timedOut },
  'calls fhir forever': {
    code: handler('for (;;) await fhir.searchResources("Patient", { _count: "1" });'),
    ...timedOut,
  },
  // Nothing can ever settle it (bots have no timers): answered at once, not at the time limit.
  'awaits a promise that never settles': {
    code: handler('await new Promise(() => {});'),
    ...processing(/never settles/),
  },
  'allocates objects without end': {
    code: handler('const a = []; for (;;) a.push({ n: a.length, text: "item " + a.length });'),
    ...outOfMemory,
  },
  // QuickJS's own limit does not add up array storage: the worker's bounded memory stops it.
  'allocates arrays without end': {
    code: handler('const a = []; for (;;) a.push(new Array(100000).fill(a.length));'),
    ...outOfMemory,
  },
  // 250 writes of 200 kB at once: the arguments count against the memory limit, and only a few
  // of the calls run on the server at a time, so the rest never reach it.
  'floods the server with large fhir calls': {
    code: handler(`
      const div = '<div xmlns="http://www.w3.org/1999/xhtml">' + 'x'.repeat(200000) + '</div>';
      const calls = [];
      for (let i = 0; i < 250; i++)
        calls.push(fhir.createResource({ resourceType: 'Patient', text: { status: 'generated', div } }));
      await Promise.all(calls);`),
    ...outOfMemory,
  },
};

interface Answered {
  readonly name: string;
  readonly status: number;
  readonly body: string;
}

describe('faulty bots under load', () => {
  let server: TestServer;
  const botIds: [string, string][] = [];
  let echoId: string;
  let patientId: string;

  const createBot = async (code: string, timeout?: number) => {
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', name: 'fault', code, ...(timeout ? { timeout } : {}) },
    });
    const body = await response.json();
    if (response.status !== 201) throw new Error(JSON.stringify(body));
    return body.id as string;
  };

  beforeAll(async () => {
    server = await startTestServer('pglite', {
      GRAPHIR_BOT_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
      GRAPHIR_BOT_MEMORY_MB: String(MEMORY_MB),
    });
    echoId = await createBot(handler('return { echo: event.input };'));
    for (const [name, fault] of Object.entries(FAULTS))
      botIds.push([name, await createBot(fault.code, fault.timeout)]);
    const patient = await server.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient', name: [{ family: 'Steady' }] },
    });
    patientId = (await patient.json()).id;
  });
  afterAll(() => server?.stop());

  const timed = async (name: string, request: () => Promise<Response>): Promise<Answered> => {
    const response = await request();
    return { name, status: response.status, body: await response.text() };
  };
  const steady: (() => Promise<Answered>)[] = [
    () => timed('read', () => server.fhir(`/Patient/${patientId}`)),
    () => timed('search', () => server.fhir('/Patient?name=Steady&_count=5')),
    () =>
      timed('create', () =>
        server.fhir('/Observation', {
          method: 'POST',
          body: {
            resourceType: 'Observation',
            status: 'final',
            code: { text: 'pulse' },
            subject: { reference: `Patient/${patientId}` },
          },
        }),
      ),
    () =>
      timed('graphql', () =>
        server.fhir('/$graphql', {
          method: 'POST',
          body: { query: `{ Patient(id: "${patientId}") { name { family } } }` },
          headers: { 'Content-Type': 'application/json' },
        }),
      ),
  ];
  const execute = (name: string, id: string, input: string) =>
    timed(name, () =>
      server.fhir(`/Bot/${id}/$execute`, {
        method: 'POST',
        body: input,
        headers: { 'Content-Type': 'text/plain' },
      }),
    );

  it('answers each faulty bot as the contract says, and every other request', async () => {
    const rssBefore = process.memoryUsage().rss;
    let rssMax = rssBefore;
    const sampling = setInterval(() => {
      rssMax = Math.max(rssMax, process.memoryUsage().rss);
    }, 50);

    let running = true;
    const loop = async (next: () => Promise<Answered>, into: Answered[]) => {
      while (running) into.push(await next());
    };
    const others: Answered[] = [];
    const echoes: Answered[] = [];
    const faulty: Answered[] = [];
    // Each fault client goes through every faulty bot at least once, starting at a different one.
    const cycles = Array.from({ length: FAULT_CLIENTS }, async (_, client) => {
      for (let n = 0; running || n < botIds.length; n++) {
        const [name, id] = botIds[(n + client * 4) % botIds.length];
        faulty.push(await execute(name, id, 'x'));
      }
    });
    const loops = [
      ...Array.from({ length: CLIENTS }, (_, i) => {
        let n = i;
        return loop(() => steady[n++ % steady.length](), others);
      }),
      loop(() => execute('echo', echoId, 'ping'), echoes),
    ];
    await sleep(LOAD_MS);
    running = false;
    await Promise.all(cycles);
    await Promise.all(loops);
    clearInterval(sampling);

    const describeRun = (r: Answered) => `${r.name}: ${r.status} ${r.body}`;
    for (const run of faulty) {
      const fault = FAULTS[run.name];
      expect(run.status, describeRun(run)).toBe(fault.status);
      const outcome = JSON.parse(run.body);
      expect(outcome.resourceType).toBe('OperationOutcome');
      expect(outcome.issue[0].code, describeRun(run)).toBe(fault.issue);
      expect(outcome.issue[0].diagnostics, describeRun(run)).toMatch(fault.diagnostics);
    }
    expect(new Set(faulty.map((r) => r.name))).toEqual(new Set(Object.keys(FAULTS)));
    expect(echoes.filter((e) => e.status !== 200 || e.body !== '{"echo":"ping"}')).toEqual([]);
    expect(others.filter((o) => o.status >= 300).map(describeRun)).toEqual([]);

    expect(echoes.length).toBeGreaterThan(0);
    const growthMb = (rssMax - rssBefore) / 2 ** 20;
    expect(growthMb, 'RSS growth').toBeLessThan(RSS_GROWTH_MB);
    // And the server still answers.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fhirError } from '../../runtime/model/fhir-error.js';
import {
  SANDBOX_GRACE_MS,
  SandboxPool,
  type SandboxRequest,
  type SandboxResult,
} from '../../runtime/bots/sandbox-pool.js';

const MB = 1024 * 1024;
const noHost: SandboxRequest['host'] = (method) => Promise.reject(new Error(`no ${method}`));

let pool: SandboxPool;

function run(code: string, options: Partial<SandboxRequest> = {}): Promise<SandboxResult> {
  return pool.run({
    code,
    event: {},
    timeoutMs: 2000,
    memoryBytes: 32 * MB,
    host: noHost,
    ...options,
  });
}

async function expectPoolWorks(): Promise<void> {
  const result = await run('exports.handler = async (fhir, event) => event.n * 2;', {
    event: { n: 21 },
  });
  expect(result).toMatchObject({ status: 'ok', value: 42 });
}

beforeAll(() => {
  pool = new SandboxPool({ size: 2 });
});

afterAll(async () => {
  await pool.close();
});

describe('bot code formats', () => {
  it('runs an ES module handler with the event in and a JSON value out', async () => {
    const code = `export async function handler(fhir, event) {
      const methods = ['readResource', 'search', 'createResource', 'graphql', 'executeBot'];
      return { echo: event.input, next: event.n + 1, client: methods.every((m) => typeof fhir[m] === 'function') };
    }`;
    const result = await run(code, { event: { input: 'hello', n: 1 } });
    expect(result).toMatchObject({ status: 'ok', value: { echo: 'hello', next: 2, client: true } });
    expect(result.durationMs).toBeGreaterThan(0);
  });

  it('runs `export const handler` and `export default { handler }`', async () => {
    const constant = await run('export const handler = async (fhir, e) => e.input.toUpperCase();', {
      event: { input: 'abc' },
    });
    expect(constant).toMatchObject({ status: 'ok', value: 'ABC' });
    const fallback = await run('const handler = () => 7;\nexport default { handler };');
    expect(fallback).toMatchObject({ status: 'ok', value: 7 });
  });

  it('runs CommonJS `exports.handler` and `module.exports = { handler }`', async () => {
    const named = await run('exports.handler = async (fhir, event) => ({ got: event.input });', {
      event: { input: [1, 2] },
    });
    expect(named).toMatchObject({ status: 'ok', value: { got: [1, 2] } });
    const assigned = await run(
      `'use strict';\nasync function handler() { return null; }\nmodule.exports = { handler };`,
    );
    expect(assigned).toMatchObject({ status: 'ok', value: null });
  });

  it('reports undefined, an Hl7Message (from a prelude) and a bot without a handler', async () => {
    const nothing = await run('exports.handler = async () => {};');
    expect(nothing).toEqual({ status: 'ok', console: '', durationMs: expect.any(Number) });
    const preludes = [
      'class Hl7Message { constructor(t) { this.t = t; } toString() { return this.t; } }',
      'globalThis.Hl7Message = Hl7Message;',
      'globalThis.__graphirReviveEvent = (e) => ({ ...e, input: new Hl7Message(e.input.__hl7) });',
    ];
    const code = `exports.handler = async (fhir, event) =>
      event.input instanceof Hl7Message ? new Hl7Message(event.input + '|ACK') : 'no';`;
    const hl7 = await run(code, { preludes, event: { input: { __hl7: 'MSH|^~\\&|A' } } });
    expect(hl7).toMatchObject({ status: 'ok', hl7: 'MSH|^~\\&|A|ACK' });
    const missing = await run('export const notHandler = 1;');
    expect(missing).toMatchObject({ status: 'error', message: expect.stringMatching(/handler/) });
  });

  it('finds the handler and settles its result with the isolate’s own functions, whatever the bot replaces', async () => {
    const code = `Reflect.get = () => () => 'wrong handler';
      JSON.parse = () => ({ input: 'wrong event' });
      JSON.stringify = () => '"wrong result"';
      Promise.resolve = () => Promise.reject(new Error('wrong promise'));
      exports.handler = (fhir, event) => ({
        then: (resolve) => resolve({ got: event.input, frozen: Object.isFrozen(fhir) }),
      });`;
    const result = await run(code, { event: { input: [1] } });
    expect(result).toMatchObject({ status: 'ok', value: { got: [1], frozen: true } });
    const getter = `Object.defineProperty(exports, 'handler', { get() { throw new Error('not today'); } });`;
    expect(await run(getter)).toMatchObject({ status: 'error', message: 'not today' });
  });

  it('reports thrown errors, thrown strings and syntax errors', async () => {
    const thrown = await run('exports.handler = async () => { throw new TypeError("boom"); };');
    expect(thrown).toMatchObject({ status: 'error', message: 'boom' });
    const text = await run('exports.handler = () => { throw "x"; };');
    expect(text).toMatchObject({ status: 'error', message: 'x' });
    const syntax = await run('export async function handler( {');
    expect(syntax).toMatchObject({ status: 'error', message: expect.stringMatching(/^Syntax/) });
    const cjsSyntax = await run('exports.handler = async () => { return 1 +; };');
    expect(cjsSyntax).toMatchObject({ status: 'error', message: expect.stringMatching(/^Syntax/) });
    const recursion = await run(
      'exports.handler = () => { const f = () => f() + 1; return f(); };',
    );
    expect(recursion).toMatchObject({ status: 'error', message: 'stack overflow' });
    // The parser uses far more native stack than QuickJS counts: its limit must still come first.
    const nested = await run('exports.handler = () => eval("[".repeat(1e5) + "]".repeat(1e5));');
    expect(nested).toMatchObject({ status: 'error', message: 'stack overflow' });
    const stuck = await run('exports.handler = async () => { await new Promise(() => {}); };');
    expect(stuck).toMatchObject({ status: 'error', message: expect.stringMatching(/never/) });
    await expectPoolWorks();
  });
});

describe('console and host calls', () => {
  it('captures console output and keeps its tail', async () => {
    const code = `exports.handler = async () => {
      for (let i = 0; i < 200; i++) console.info(i + ':' + 'x'.repeat(1000));
      console.log('last');
    };`;
    const result = await run(code);
    expect(result.status).toBe('ok');
    expect(result.console.length).toBeLessThan(70 * 1024);
    expect(result.console).toMatch(/earlier lines dropped/);
    expect(result.console.endsWith('199:' + 'x'.repeat(1000) + '\nlast')).toBe(true);
    const short = await run(`exports.handler = () => { console.log('hello', { a: 1 }, 2);
      console.warn('careful'); console.error(new Error('bad')); };`);
    expect(short.console).toMatch(/^hello \{"a":1\} 2\nWARN careful\nERROR Error: bad/);
  });

  it('formats console lines and settles fhir replies with the globals the bot started with', async () => {
    // The console's and the fhir client's JavaScript is compiled on first use, after the bot's
    // code ran: it must still see JSON and Error as they were, not as the bot left them.
    const host: SandboxRequest['host'] = async (method, args) => {
      if (method === 'readResource') return { resourceType: 'Patient', id: args[1] };
      throw fhirError(404, 'not-found', 'Patient/gone is not known');
    };
    const code = `exports.handler = async (fhir) => {
      const { stringify } = JSON;
      JSON.stringify = () => '"tampered"';
      JSON.parse = () => ({ ok: true, value: 'tampered' });
      globalThis.Error = function Fake() {};
      console.log({ a: 1 }, [2], 'x'.repeat(5000));
      console.error(new RangeError('bad'));
      const patient = await fhir.readResource('Patient', 'p1');
      const failure = await fhir.deleteResource('Patient', 'gone').catch((e) => e.outcome.issue[0].code);
      return stringify({ patient, failure });
    };`;
    const result = await run(code, { host });
    expect(result.status).toBe('ok');
    expect(JSON.parse(result.status === 'ok' ? (result.value as string) : '')).toEqual({
      patient: { resourceType: 'Patient', id: 'p1' },
      failure: 'not-found',
    });
    const [first, second] = result.console.split('\n');
    expect(first).toBe(`{"a":1} [2] ${'x'.repeat(4096 - 12)}… (truncated)`);
    expect(second).toMatch(/^ERROR RangeError: bad/);
  });

  it('round-trips a host call, rejects a failing one, and works after awaits', async () => {
    const calls: [string, unknown[]][] = [];
    const host: SandboxRequest['host'] = async (method, args) => {
      calls.push([method, args]);
      if (method === 'readResource') return { resourceType: 'Patient', id: args[1], active: true };
      throw fhirError(404, 'not-found', 'Patient/gone is not known');
    };
    const code = `export async function handler(fhir, event) {
      const patient = await fhir.readResource('Patient', event.id);
      let failure;
      try { await fhir.deleteResource('Patient', 'gone'); } catch (e) {
        failure = { message: e.message, code: e.outcome.issue[0].code };
      }
      let sum = 0;
      for (let i = 0; i < 1000; i++) sum += i;
      await Promise.resolve();
      return { patient, failure, sum };
    }`;
    const result = await run(code, { host, event: { id: 'p1' } });
    expect(result).toMatchObject({
      status: 'ok',
      value: {
        patient: { resourceType: 'Patient', id: 'p1', active: true },
        failure: { message: 'fhir.deleteResource: Patient/gone is not known', code: 'not-found' },
        sum: 499500,
      },
    });
    expect(calls).toEqual([
      ['readResource', ['Patient', 'p1']],
      ['deleteResource', ['Patient', 'gone']],
    ]);
  });
});

describe('isolation', () => {
  it('blocks the usual break-out attempts', async () => {
    const code = `exports.handler = async function () {
      const probes = {
        ctor: () => this.constructor.constructor('return process')(),
        require: () => require('fs'),
        process: () => process.env,
        fetch: () => globalThis.fetch.call(null, 'http://example.com'),
        xhr: () => new XMLHttpRequest(),
        ws: () => new WebSocket('ws://example.com'),
        std: () => std.loadFile('/etc/passwd'),
        os: () => os.readdir('/'),
      };
      const out = {};
      for (const [name, probe] of Object.entries(probes)) {
        try { out[name] = 'reached: ' + typeof probe(); } catch (e) { out[name] = 'blocked: ' + e.message; }
      }
      for (const name of ['fs', 'std', 'os', 'node:child_process']) {
        try { await import(name); out['import ' + name] = 'reached'; }
        catch (e) { out['import ' + name] = 'blocked: ' + e.message; }
      }
      return out;
    };`;
    const result = await run(code);
    expect(result.status).toBe('ok');
    const outcome = result.status === 'ok' ? (result.value as Record<string, string>) : {};
    expect(Object.keys(outcome)).toHaveLength(12);
    for (const [name, value] of Object.entries(outcome)) {
      expect(value, name).toMatch(/^blocked: /);
    }
    expect(outcome.require).toBe("blocked: Cannot find module 'fs': bots cannot load modules");
    const staticImport = await run(`import fs from 'fs';\nexport const handler = () => 1;`);
    expect(staticImport).toMatchObject({ status: 'error', message: expect.stringMatching(/fs/) });
  });

  it('runs each bot with the preludes it was given, as they change from run to run', async () => {
    const single = new SandboxPool({ size: 1 });
    const withA = ['globalThis.mark = "A";'];
    const withB = ['globalThis.mark = "B";'];
    const code = 'exports.handler = () => typeof mark === "string" ? mark : "none";';
    const runWith = (preludes?: string[]) =>
      single.run({
        code,
        event: {},
        preludes,
        timeoutMs: 2000,
        memoryBytes: 16 * MB,
        host: noHost,
      });
    try {
      const values = [];
      for (const preludes of [withA, withA, undefined, withB, withA, withA]) {
        values.push((await runWith(preludes)) as { value?: unknown });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(values.map((v) => v.value)).toEqual(['A', 'A', 'none', 'B', 'A', 'A']);
    } finally {
      await single.close();
    }
  });

  it('defines lazy groups of globals, evaluated on first read only, once, and replaceable', async () => {
    const preludes = [
      { globals: ['greeting'], source: '() => ({ greeting: { text: "hello" } })' },
      { globals: ['broken'], source: '() => { throw new Error("not now"); }' },
      { globals: ['unparsable'], source: '1 +' },
      {
        globals: ['Left', 'Right', 'viaHost'],
        source:
          '(host) => { class Left {} return { Left, Right: class extends Left {}, viaHost: typeof host.call }; }',
      },
      'globalThis.greet = () => greeting.text;',
    ];
    const code = `exports.handler = () => [greet(), greeting === greeting, typeof greeting,
      new Right() instanceof Left, viaHost, typeof __graphirLazy];`;
    const read = await run(code, { preludes });
    expect(read).toMatchObject({
      status: 'ok',
      value: ['hello', true, 'object', true, 'function', 'undefined'],
    });
    const replaced = await run('exports.handler = () => { greeting = 1; return greeting + 1; };', {
      preludes,
    });
    expect(replaced).toMatchObject({ status: 'ok', value: 2 });
    const thrown = await run('exports.handler = () => broken;', { preludes });
    expect(thrown).toMatchObject({ status: 'error', message: 'not now' });
    const syntax = await run('exports.handler = () => unparsable;', { preludes });
    expect(syntax).toMatchObject({ status: 'error', message: expect.stringMatching(/unexpected/) });
  });

  it('gives each execution fresh globals', async () => {
    const single = new SandboxPool({ size: 1 });
    try {
      const code = `exports.handler = async (fhir, event) => {
        const before = typeof globalThis.x + ' ' + typeof ({}).polluted;
        globalThis.x = 1; Object.prototype.polluted = true; JSON.parse = () => 'tampered';
        return before;
      };`;
      const request = { code, event: {}, timeoutMs: 2000, memoryBytes: 16 * MB, host: noHost };
      expect(await single.run(request)).toMatchObject({ value: 'undefined undefined' });
      expect(await single.run(request)).toMatchObject({ value: 'undefined undefined' });
      // Time for the worker to prepare its next isolate ahead: that one must be fresh too.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await single.run(request)).toMatchObject({ value: 'undefined undefined' });
    } finally {
      await single.close();
    }
    expect(
      await single.run({ code: '', event: {}, timeoutMs: 1, memoryBytes: MB, host: noHost }),
    ).toMatchObject({ status: 'error', message: expect.stringMatching(/closed/) });
  });
});

describe('limits', () => {
  it('stops a synchronous infinite loop while the main thread stays responsive', async () => {
    let ticks = 0;
    const interval = setInterval(() => ticks++, 20);
    const result = await run('exports.handler = () => { for (;;) {} };', { timeoutMs: 500 });
    clearInterval(interval);
    expect(result.status).toBe('timeout');
    expect(ticks).toBeGreaterThanOrEqual(10);
    await expectPoolWorks();
  });

  it('stops an infinite loop after an await, and a bot that catches the interrupt', async () => {
    const host: SandboxRequest['host'] = async () => ({ resourceType: 'Patient', id: 'p' });
    const after = await run(
      `export async function handler(fhir) {
        await fhir.readResource('Patient', 'p');
        console.log('looping');
        while (true) {}
      }`,
      { timeoutMs: 400, host },
    );
    expect(after).toMatchObject({ status: 'timeout', console: 'looping' });
    const catching = await run(
      'exports.handler = () => { for (;;) { try { for (;;) {} } catch (e) {} } };',
      { timeoutMs: 300 },
    );
    expect(catching.status).toBe('timeout');
    await expectPoolWorks();
  });

  it('terminates and replaces a worker stuck where the interrupt handler is not polled', async () => {
    // Array.prototype.join runs in C: QuickJS polls no interrupt handler inside it, so only the
    // pool's hard deadline (timeout + grace) stops this bot.
    let ticks = 0;
    const interval = setInterval(() => ticks++, 20);
    const started = performance.now();
    const result = await run('exports.handler = () => new Array(2 ** 32 - 1).join("");', {
      timeoutMs: 200,
    });
    const elapsed = performance.now() - started;
    clearInterval(interval);
    expect(result).toMatchObject({ status: 'timeout', console: '' });
    // Not before the deadline and the grace: the worker had its chance to report.
    expect(elapsed).toBeGreaterThanOrEqual(200 + SANDBOX_GRACE_MS - 5);
    expect(ticks).toBeGreaterThanOrEqual(10);
    await expectPoolWorks();
  });

  it('runs more bots than workers at once, a runaway one among them', async () => {
    const echo = 'exports.handler = async (fhir, event) => event.n;';
    const runs = Array.from({ length: 12 }, (_, n) => run(echo, { event: { n } }));
    const loop = run('exports.handler = () => { for (;;) {} };', { timeoutMs: 300 });
    expect((await Promise.all(runs)).map((r) => r.status === 'ok' && r.value)).toEqual(
      Array.from({ length: 12 }, (_, n) => n),
    );
    expect((await loop).status).toBe('timeout');
  });

  it('stops memory bombs', async () => {
    const array = await run(
      'exports.handler = () => { const a = []; for (;;) a.push({ n: a.length, s: "x" + a.length }); };',
      { memoryBytes: 16 * MB, timeoutMs: 10_000 },
    );
    expect(array.status).toBe('memory');
    // QuickJS concatenates into ropes: searching the string makes it allocate for real.
    const text = await run(
      'exports.handler = () => { let s = "x"; for (;;) { s += s; s.indexOf("y"); } };',
      {
        memoryBytes: 16 * MB,
        timeoutMs: 10_000,
      },
    );
    expect(text.status).toBe('memory');
    await expectPoolWorks();
  });
});

describe('scheduling', () => {
  /** Each worker's last run, by id (the pool's slots are private: read here, not offered). */
  const lastRuns = (from: SandboxPool) =>
    [...(from as unknown as { slots: Set<{ lastRun: number }> }).slots].map((s) => s.lastRun);
  const ECHO = 'exports.handler = async (fhir, event) => event.n;';
  const runner =
    (on: SandboxPool, preludes: string[] = []) =>
    (code: string, n = 0) =>
      on.run({ code, event: { n }, preludes, timeoutMs: 2000, memoryBytes: 32 * MB, host: noHost });
  /**
   * One run on each of the pool's two workers: each waits in a `fhir` call until both have made
   * theirs, so neither can finish before the other has started on its own worker.
   */
  const onBothWorkers = async (on: SandboxPool, preludes: string[]) => {
    let calls = 0;
    let both: () => void = () => {};
    const meeting = new Promise<void>((resolve) => (both = resolve));
    const host: SandboxRequest['host'] = async () => {
      if (++calls === 2) both();
      await meeting;
      return null;
    };
    const code = `exports.handler = async (fhir) => { await fhir.readResource('Patient', 'x'); };`;
    const run = () =>
      on.run({ code, event: {}, preludes, timeoutMs: 10_000, memoryBytes: 32 * MB, host });
    expect((await Promise.all([run(), run()])).map((r) => r.status)).toEqual(['ok', 'ok']);
  };

  it('gives one run after another to the worker that ran last while it settles quickly', async () => {
    const two = new SandboxPool({ size: 2, handOffMs: 1000 });
    try {
      // The same preludes (by identity) for all runs, as the runner's keys go by them.
      const preludes: string[] = [];
      const runOn = runner(two, preludes);
      await onBothWorkers(two, preludes);
      const before = lastRuns(two);
      expect(before.filter((run) => run > 0)).toHaveLength(2);
      for (let n = 2; n < 12; n++) expect(await runOn(ECHO, n)).toMatchObject({ value: n });
      // One worker took all ten: the other's last run is the one it had before.
      expect(lastRuns(two).filter((run, i) => run === before[i])).toHaveLength(1);
    } finally {
      await two.close();
    }
  });

  it('gives the next run to an idle worker when the last one takes long to prepare', async () => {
    // A prelude that takes 30 ms to evaluate: the worker that ran last is far from ready.
    const two = new SandboxPool({ size: 2 });
    try {
      const slowPrelude = ['{ const end = Date.now() + 30; while (Date.now() < end); }'];
      const runOn = runner(two, slowPrelude);
      await onBothWorkers(two, slowPrelude);
      for (let n = 0; n < 8; n += 2) {
        // Both workers ready; the one that runs this starts preparing the next isolate at once.
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(await runOn(ECHO, n)).toMatchObject({ value: n });
        const before = lastRuns(two);
        expect(await runOn(ECHO, n + 1)).toMatchObject({ value: n + 1 });
        const after = lastRuns(two);
        // The worker that ran the one before, still preparing, did not take this one.
        const last = before.indexOf(Math.max(...before));
        expect(after[last]).toBe(before[last]);
        expect(Math.max(...after)).toBeGreaterThan(Math.max(...before));
      }
    } finally {
      await two.close();
    }
  });
});

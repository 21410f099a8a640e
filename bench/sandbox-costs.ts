/**
 * npm run bench:sandbox — what isolating a bot costs before any HTTP, in one process, from dist/
 * as `npm start` runs it: a message to a worker thread and back, and an echo bot through the
 * sandbox pool, each spaced as requests at concurrency 1 are, so that every crossing wakes a
 * thread that was asleep; then, in a QuickJS module, making a runtime and context (most of
 * preparing an isolate), preparing an isolate as the workers do, and freeing one, back to back,
 * as a worker settles straight after its run; and the same with the web platform's lazy groups
 * (web-platform.ts), whose cost a bot that reads none of them must not notice (an echo bot's
 * isolate defines none of them: bot-preludes.ts). Medians and 90th percentiles of many runs.
 */
import { Worker } from 'node:worker_threads';
import { newQuickJSWASMModuleFromVariant, RELEASE_SYNC } from 'quickjs-emscripten';
import { buildOnce } from './bench-server.js';
import { percentile } from './measure.js';

const RUNS = Number(process.env.BENCH_REQUESTS ?? 2000);
/** The pause between runs: a thread that waits this long is asleep when the next run comes. */
const SPACING_MS = 1;
const ECHO = 'export async function handler(fhir, event) { return event.input; }';
const FETCHING = 'export async function handler(fhir, event) { return fetch(event.input.url); }';

buildOnce();
const { SandboxPool } = (await import(
  fromDist('bots/sandbox-pool.js')
)) as typeof import('../runtime/bots/sandbox-pool.js');
const { prepareIsolate } = (await import(
  fromDist('bots/sandbox-isolate.js')
)) as typeof import('../runtime/bots/sandbox-isolate.js');
const { preludesFor } = (await import(
  fromDist('bots/bot-preludes.js')
)) as typeof import('../runtime/bots/bot-preludes.js');

const echoWorker = new Worker(
  "require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m));",
  { eval: true },
);
const roundTrip = await spaced(async () => {
  const answered = new Promise((resolve) => echoWorker.once('message', resolve));
  echoWorker.postMessage({ type: 'run', id: 1, code: ECHO, eventJson: '{"input":{"a":1}}' });
  await answered;
});
await echoWorker.terminate();
report('a message to a worker thread and back', roundTrip);

const pool = new SandboxPool({ size: 1 });
const run = () =>
  pool.run({
    code: ECHO,
    event: { input: { a: 1, b: [1, 2, 3] }, contentType: 'application/json', secrets: {} },
    timeoutMs: 10_000,
    memoryBytes: 64 * 1024 * 1024,
    host: async () => null,
  });
for (let i = 0; i < RUNS; i++) await run(); // the worker started, its code paths compiled
report('an echo bot through the sandbox pool', await spaced(run));
await pool.close();

const quickjs = await newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
const contexts: number[] = [];
const prepared: number[] = [];
const preparedLazy: number[] = [];
const preparedHl7: number[] = [];
const freed: number[] = [];
// As bots get them (bot-preludes.ts): the web platform deferred until the client loads (an echo
// bot); its globals defined, loaded on first read (a bot that names one); the HL7 classes
// compiled ahead (HL7 input); and with no preludes at all, for what they add.
const plain = preludesFor(false, ECHO);
const lazy = preludesFor(false, FETCHING);
const eagerHl7 = preludesFor(true, ECHO);
const preparedBare: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const start = performance.now();
  const runtime = quickjs.newRuntime();
  const context = runtime.newContext();
  contexts.push(performance.now() - start);
  context.dispose();
  runtime.dispose();
  const preparing = performance.now();
  const isolate = prepareIsolate(quickjs, plain, 1);
  const freeing = performance.now();
  isolate.tryDispose();
  prepared.push(freeing - preparing);
  freed.push(performance.now() - freeing);
  const preparingLazy = performance.now();
  const lazyIsolate = prepareIsolate(quickjs, lazy, 4);
  preparedLazy.push(performance.now() - preparingLazy);
  lazyIsolate.tryDispose();
  const preparingHl7 = performance.now();
  const hl7Isolate = prepareIsolate(quickjs, eagerHl7, 2);
  preparedHl7.push(performance.now() - preparingHl7);
  hl7Isolate.tryDispose();
  const preparingBare = performance.now();
  const bare = prepareIsolate(quickjs, [], 3);
  preparedBare.push(performance.now() - preparingBare);
  bare.tryDispose();
}
report('a QuickJS runtime and context made', contexts);
report('an isolate prepared with no preludes', preparedBare);
report('an isolate prepared for an echo bot', prepared);
report('… for a bot that names a web global', preparedLazy);
report('… with the HL7 classes compiled ahead', preparedHl7);
report('an isolate freed', freed);

/** A module of the build (`npm start` runs dist/, and a worker from source runs under tsx). */
function fromDist(path: string): string {
  return new URL(`../dist/runtime/${path}`, import.meta.url).href;
}

/** `work` RUNS times, SPACING_MS apart (the thread sleeps meanwhile); the times it took. */
async function spaced(work: () => unknown): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    await new Promise((resolve) => setTimeout(resolve, SPACING_MS));
    const start = performance.now();
    await work();
    times.push(performance.now() - start);
  }
  return times;
}

function report(what: string, times: number[]): void {
  const p50 = percentile(times, 50).toFixed(3);
  const p90 = percentile(times, 90).toFixed(3);
  console.log(`${what.padEnd(46)} p50 ${p50} ms  p90 ${p90} ms`);
}

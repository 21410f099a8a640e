/**
 * The worker thread of the sandbox pool: loads the QuickJS WebAssembly module once, then runs
 * one bot at a time, each in a fresh QuickJS runtime (see sandbox-isolate.ts). Between runs it
 * prepares the next runtime, with the preludes the last run had. `fhir` calls are posted to the
 * main thread as JSON text and answered the same way.
 */
import { parentPort } from 'node:worker_threads';
import { newQuickJSWASMModule, RELEASE_SYNC } from 'quickjs-emscripten';
import { prepareIsolate, runIsolate, type PreparedIsolate } from './sandbox-isolate.js';
import type { FromWorker, RunMessage, ToWorker } from './sandbox-types.js';

if (!parentPort) throw new Error('sandbox-worker.ts runs as a worker thread of the sandbox pool');
const port = parentPort;
const post = (message: FromWorker): void => port.postMessage(message);

const quickjs = newQuickJSWASMModule(RELEASE_SYNC);
const replies = new Map<number, (replyJson: string) => void>();
let lastCallId = 0;
let prepared: PreparedIsolate | undefined;
/** The preludes the pool sent last; it sends them again only when they change. */
let knownPreludes: { key: number; preludes: readonly string[] } = { key: 0, preludes: [] };

port.on('message', (message: ToWorker) => {
  if (message.type === 'run') void run(message);
  else replies.get(message.callId)?.(message.replyJson);
});
quickjs.then(
  () => post({ type: 'ready' }),
  (error: unknown) => {
    throw error;
  },
);

async function run(request: RunMessage): Promise<void> {
  const calls = new Set<number>();
  const callHost = (method: string, argsJson: string): Promise<string> =>
    new Promise((resolve) => {
      const callId = ++lastCallId;
      calls.add(callId);
      replies.set(callId, (replyJson) => {
        replies.delete(callId);
        resolve(replyJson);
      });
      post({ type: 'host-call', id: request.id, callId, method, argsJson });
    });
  try {
    if (request.preludes) knownPreludes = { key: request.preludesKey, preludes: request.preludes };
    if (knownPreludes.key !== request.preludesKey) {
      throw new Error(`The pool sent preludes ${request.preludesKey} without their text`);
    }
    const isolate = prepared;
    prepared = undefined;
    const { outcome, clean } = await runIsolate(
      await quickjs,
      request,
      knownPreludes.preludes,
      callHost,
      isolate,
    );
    post({ type: 'result', id: request.id, outcome, retiring: !clean });
    // A QuickJS runtime that could not be freed may have left the module broken: start afresh.
    if (!clean) process.exit(1);
    setImmediate(() => prepareNext());
  } finally {
    for (const callId of calls) replies.delete(callId);
  }
}

/** Ready for the next run; a run that arrives first makes its own isolate. */
async function prepareNext(): Promise<void> {
  if (prepared) return;
  try {
    prepared = prepareIsolate(await quickjs, knownPreludes.preludes, knownPreludes.key);
  } catch {
    // Preludes that fail do so again in the next run, which reports it.
  }
}

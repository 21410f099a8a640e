/**
 * The worker thread of the sandbox pool: loads the QuickJS WebAssembly module once, then runs
 * one bot at a time, each in a fresh QuickJS runtime (see sandbox-isolate.ts). After each run it
 * sends the outcome, frees the runtime and prepares the next one, for each of the last
 * PREPARED_KINDS preludes it ran with, then tells the pool it is ready. `fhir` calls are posted to
 * the main thread as JSON text and answered the same way.
 */
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  RELEASE_SYNC,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';
import { noteMemoryMaximum } from './sandbox-failure.js';
import { prepareIsolate, runIsolate, type PreparedIsolate } from './sandbox-isolate.js';
import type { FromWorker, Prelude, RunMessage, ToWorker } from './sandbox-types.js';

if (!parentPort) throw new Error('sandbox-worker.ts runs as a worker thread of the sandbox pool');
const port = parentPort;
const post = (message: FromWorker): void => port.postMessage(message);

/** `WebAssembly.Memory`, which the TypeScript libraries of this project do not declare. */
const WasmMemory = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => object };
  }
).WebAssembly.Memory;
/** WebAssembly pages, and the build's INITIAL_MEMORY (QuickJS's own start, a few MB of it used). */
const PAGE = 65_536;
const INITIAL_BYTES = 16 * 1024 * 1024;
/** The most a wasm32 build of QuickJS can grow to anyway. */
const MAX_PAGES = 32_768;

/**
 * QuickJS's memory limit (`setMemoryLimit`) refuses one allocation larger than the limit, but
 * does not add up the sizes of the others (under Emscripten it counts a few bytes for each):
 * a bot under a 16 MB limit that keeps arrays of 100,000 numbers grew the module's WebAssembly
 * memory to its 2 GB maximum, which is never given back (quickjs-emscripten#271). So the module
 * gets a memory of our own whose maximum is the bot memory limit, and half as much again for the
 * allocator, above what QuickJS starts with: past it, allocations fail inside QuickJS, which
 * reports out of memory.
 */
function boundedMemory(memoryBytes: unknown): object {
  const limit = typeof memoryBytes === 'number' && memoryBytes > 0 ? memoryBytes : 0;
  const maximum = limit
    ? Math.min(MAX_PAGES, Math.ceil((INITIAL_BYTES + 1.5 * limit) / PAGE))
    : MAX_PAGES;
  const memory = new WasmMemory({ initial: INITIAL_BYTES / PAGE, maximum });
  noteMemoryMaximum(memory, maximum * PAGE);
  return memory;
}

const quickjs = newQuickJSWASMModuleFromVariant(
  newVariant(RELEASE_SYNC, { wasmMemory: boundedMemory(workerData?.memoryBytes) }),
);
/**
 * How many sets of preludes a worker keeps an isolate prepared for: the bot runner uses three
 * (bot-preludes.ts), and an idle isolate holds a few hundred KB.
 */
const PREPARED_KINDS = 3;

const replies = new Map<number, (replyJson: string) => void>();
let lastCallId = 0;
/**
 * By preludes key, the least recently run first: the preludes, which the pool sends only for a
 * key missing here (it learns the keys from each `ready`), and an isolate prepared with them
 * unless preparing failed.
 */
const kinds = new Map<number, { preludes: readonly Prelude[]; isolate?: PreparedIsolate }>();

port.on('message', (message: ToWorker) => {
  if (message.type === 'run') void run(message);
  else replies.get(message.callId)?.(message.replyJson);
});
quickjs.then(
  () => post({ type: 'ready', known: [], prepared: [] }),
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
  const key = request.preludesKey;
  const held = kinds.get(key);
  kinds.delete(key);
  const preludes = request.preludes ?? held?.preludes;
  if (!preludes) throw new Error(`The pool sent preludes ${key} without their text`);
  const module = await quickjs;
  let clean: boolean;
  let settling = 0;
  try {
    const { outcome, dispose } = await runIsolate(
      module,
      request,
      preludes,
      callHost,
      held?.isolate,
    );
    post({ type: 'result', id: request.id, outcome });
    settling = performance.now();
    clean = dispose();
  } finally {
    for (const callId of calls) replies.delete(callId);
  }
  // A QuickJS runtime that could not be freed may have left the module broken: start afresh.
  // The pool gives this worker nothing more until it is ready, so no other run is lost.
  if (!clean) process.exit(1);
  prepareAhead(module, key, preludes);
  const known = [...kinds.keys()];
  const prepared = known.filter((k) => kinds.get(k)!.isolate);
  post({ type: 'ready', known, prepared, settledMs: performance.now() - settling });
}

function prepareAhead(module: QuickJSWASMModule, key: number, preludes: readonly Prelude[]): void {
  let isolate: PreparedIsolate | undefined;
  try {
    isolate = prepareIsolate(module, preludes, key);
  } catch {
    // Preludes that fail do so again in the next run, which reports it.
  }
  kinds.set(key, { preludes, isolate });
  for (const [oldKey, old] of kinds) {
    if (kinds.size <= PREPARED_KINDS) break;
    kinds.delete(oldKey);
    if (old.isolate && !old.isolate.tryDispose()) process.exit(1);
  }
}

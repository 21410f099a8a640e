/**
 * The sandbox in which stored bot code runs: QuickJS compiled to WebAssembly
 * (quickjs-emscripten, release sync variant) inside a small pool of worker threads.
 *
 * Why QuickJS in workers rather than isolated-vm (or node:vm, which is no security boundary):
 * - isolated-vm 5 needs a native build from source (a C++ toolchain wherever it is installed)
 *   and `--no-node-snapshot` on Node 20; isolated-vm 7 needs Node 24. QuickJS is WebAssembly:
 *   nothing to compile, no runtime flags.
 * - Each execution gets its own QuickJS runtime in a separate, memory-safe WASM heap, with its own
 *   memory limit (`setMemoryLimit`), stack limit, an interrupt handler that stops synchronous
 *   loops at the deadline, and fresh globals. Nothing in it can reach Node's objects: only
 *   strings (JSON) cross between the isolate, the worker and the main thread.
 * - Workers keep a bot stuck in a loop off the server's event loop. A few QuickJS builtins run
 *   long in C without polling the interrupt handler (e.g. `new Array(2 ** 32 - 1).join('')`), so
 *   a worker that overruns the deadline by SANDBOX_GRACE_MS is terminated and replaced; its
 *   `resourceLimits` are a backstop for the worker's own Node heap.
 * - Cost: QuickJS interprets (no JIT), which suits short glue code; a worker's first run waits
 *   for it to start and compile the WebAssembly module, later ones find an isolate prepared
 *   (`npm run bench:sandbox`, docs/performance.md).
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type {
  FromWorker,
  Prelude,
  SandboxRequest,
  SandboxResult,
  ToWorker,
  WorkerOutcome,
} from './sandbox-types.js';

export type { Prelude, SandboxHost, SandboxRequest, SandboxResult } from './sandbox-types.js';

/** How long past its deadline a worker may take to report before it is terminated. */
export const SANDBOX_GRACE_MS = 500;
/**
 * A run waits up to this long for the worker that ran last to finish settling (freeing its
 * isolate, preparing the next), rather than going to another, idle worker: the idle worker's
 * thread must be woken and scheduled while the last one still settles, and its caches are cold,
 * which at concurrency 1 cost more than the wait (docs/performance.md). An HL7 isolate, which
 * takes longer to prepare than an echo takes to run, is still not worth waiting for.
 */
const HAND_OFF_MS = 1;
const FROM_SOURCE = import.meta.url.endsWith('.ts');
/**
 * A backstop for the worker's own Node heap, and a deep native stack: QuickJS's stack check
 * counts its WASM shadow stack, while V8 runs the same frames on the thread's stack, many times
 * bigger (deeply nested source in the parser). If V8's limit came first, QuickJS
 * would be left half-unwound; so 16 MB here against a 256 KB QuickJS limit (sandbox-isolate.ts).
 */
const RESOURCE_LIMITS = {
  maxOldGenerationSizeMb: 256,
  maxYoungGenerationSizeMb: 32,
  stackSizeMb: 16,
};

const NO_PRELUDES: readonly Prelude[] = [];

interface Job {
  readonly id: number;
  readonly request: SandboxRequest;
  readonly eventJson: string;
  readonly preludesKey: number;
  readonly resolve: (result: SandboxResult) => void;
  started: number;
  timer?: NodeJS.Timeout;
  /**
   * Sent to a worker still freeing and preparing after its last run: until it says it is ready,
   * it has not started this one, which another worker takes over should it exit first.
   */
  queued?: boolean;
}

interface Slot {
  readonly worker: Worker;
  /** The largest bot memory limit this worker's WebAssembly memory was sized for. */
  readonly memoryBytes: number;
  /** It has loaded QuickJS once. */
  ready: boolean;
  /** It said it is ready, and has been given no run since. */
  free: boolean;
  /** From its last `ready`: the preludes keys it holds the text of, and a prepared isolate for. */
  known: readonly number[];
  prepared: readonly number[];
  /** The id and preludes of the last job it was given. */
  lastRun: number;
  lastKey?: number;
  job?: Job;
  /** Since its last answer, and for which preludes, until it is ready. */
  settling?: { readonly since: number; readonly preludesKey: number };
  /** By preludes key, how long settling after a run with them took it last. */
  readonly settledMs: Map<number, number>;
}

export class SandboxPool {
  private readonly size: number;
  private readonly slots = new Set<Slot>();
  private readonly queue: Job[] = [];
  private readonly terminating = new Set<Promise<unknown>>();
  private lastId = 0;
  private closed = false;
  private readonly preludesKeys = new WeakMap<readonly Prelude[], number>();
  private lastPreludesKey = 0;
  /** The largest memory limit asked for so far: new workers are sized for it (sandbox-worker.ts). */
  private memoryBytes = 0;

  private readonly handOffMs: number;
  /**
   * By depth, the workers of runs that a bot started (`fhir.executeBot`), made on first use. A
   * bot waiting for its child holds its worker: were the child to wait for a worker of the same
   * pool, bots waiting for children could hold them all. A run waits only for runs one level
   * deeper, and the deepest level starts none, so every level makes progress.
   */
  private readonly nested = new Map<number, SandboxPool>();

  constructor(options: { size?: number; handOffMs?: number } = {}) {
    this.size = poolSize(options.size);
    this.handOffMs = options.handOffMs ?? HAND_OFF_MS;
  }

  run(request: SandboxRequest): Promise<SandboxResult> {
    if (this.closed) return Promise.resolve(failed('The sandbox pool is closed', 0));
    if (request.depth) return this.nestedPool(request.depth).run({ ...request, depth: 0 });
    let eventJson: string;
    try {
      eventJson = JSON.stringify(request.event ?? null);
    } catch (error) {
      return Promise.resolve(failed(`The event is not JSON: ${messageOf(error)}`, 0));
    }
    this.memoryBytes = Math.max(this.memoryBytes, request.memoryBytes);
    const preludesKey = this.preludesKeyOf(request.preludes ?? NO_PRELUDES);
    return new Promise((resolve) => {
      this.queue.push({ id: ++this.lastId, request, eventJson, preludesKey, resolve, started: 0 });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const nested = [...this.nested.values()].map((pool) => pool.close());
    for (const job of this.queue.splice(0)) job.resolve(failed('The sandbox pool is closed', 0));
    const slots = [...this.slots];
    this.slots.clear();
    for (const slot of slots) if (slot.job) this.finish(slot.job, closedOutcome());
    slots.forEach((slot) => this.terminate(slot));
    await Promise.all([...this.terminating, ...nested]);
  }

  private nestedPool(depth: number): SandboxPool {
    let pool = this.nested.get(depth);
    if (!pool) {
      pool = new SandboxPool({ size: this.size, handOffMs: this.handOffMs });
      this.nested.set(depth, pool);
    }
    return pool;
  }

  private dispatch(): void {
    // Idle workers sized for a smaller limit than a bot now has make way for new ones.
    for (const slot of this.slots) {
      if (slot.free && slot.memoryBytes < this.memoryBytes) {
        this.slots.delete(slot);
        this.terminate(slot);
      }
    }
    while (this.queue.length > 0) {
      const { preludesKey } = this.queue[0];
      const slot =
        this.lastSlotSoonFree(preludesKey) ??
        this.freeSlotFor(preludesKey) ??
        this.settlingSlotFor(preludesKey);
      if (!slot) break;
      this.start(slot, this.queue.shift() as Job);
    }
    const starting = [...this.slots].filter((slot) => !slot.ready).length;
    for (let n = starting; n < this.queue.length && this.slots.size < this.size; n++) this.spawn();
  }

  private spawn(): void {
    const url = FROM_SOURCE ? sourceWorkerUrl() : new URL('./sandbox-worker.js', import.meta.url);
    const { memoryBytes } = this;
    const worker = new Worker(url, {
      execArgv: [],
      resourceLimits: RESOURCE_LIMITS,
      workerData: { memoryBytes },
    });
    const slot: Slot = {
      worker,
      memoryBytes,
      ready: false,
      free: false,
      known: [],
      prepared: [],
      lastRun: 0,
      settledMs: new Map(),
    };
    this.slots.add(slot);
    worker.on('message', (message: FromWorker) => this.receive(slot, message));
    worker.on('error', (error) => this.retire(slot, error));
    worker.on('exit', (code) => this.retire(slot, new Error(`it exited with code ${code}`)));
  }

  /**
   * A free worker, one with an isolate prepared for these preludes if there is one, so a run
   * never waits for a worker still freeing and preparing after its last run; among those, the
   * one that ran last, whose code and memory the CPU caches still hold (alternating between two
   * workers made an echo markedly slower).
   */
  private freeSlotFor(preludesKey: number): Slot | undefined {
    let found: Slot | undefined;
    let foundPrepared = false;
    for (const slot of this.slots) {
      if (!slot.free) continue;
      const prepared = slot.prepared.includes(preludesKey);
      if (
        !found ||
        (prepared && !foundPrepared) ||
        (prepared === foundPrepared && slot.lastRun > found.lastRun)
      ) {
        found = slot;
        foundPrepared = prepared;
      }
    }
    return found;
  }

  /**
   * The worker that ran last, when it is settling for these preludes and, judging by its last
   * settling for them, will be ready within `handOffMs`.
   */
  private lastSlotSoonFree(preludesKey: number): Slot | undefined {
    let last: Slot | undefined;
    for (const slot of this.slots) if (!last || slot.lastRun > last.lastRun) last = slot;
    if (!last?.settling || last.job || last.settling.preludesKey !== preludesKey) return undefined;
    if (last.memoryBytes < this.memoryBytes) return undefined;
    const settledMs = last.settledMs.get(preludesKey);
    if (settledMs === undefined) return undefined;
    return last.settling.since + settledMs - performance.now() <= this.handOffMs ? last : undefined;
  }

  /**
   * With every worker busy, one that has answered and is freeing and preparing takes the next
   * run as soon as it can, rather than waiting for its `ready` to cross to this thread and the
   * run to cross back (which cost a sixth of the executions per second at concurrency 16). Preferably
   * one preparing for these preludes.
   */
  private settlingSlotFor(preludesKey: number): Slot | undefined {
    let found: Slot | undefined;
    for (const slot of this.slots) {
      if (!slot.ready || slot.free || slot.job || slot.memoryBytes < this.memoryBytes) continue;
      if (slot.lastKey === preludesKey) return slot;
      found ??= slot;
    }
    return found;
  }

  private start(slot: Slot, job: Job): void {
    const { code, preludes = NO_PRELUDES, timeoutMs, memoryBytes } = job.request;
    const { id, eventJson, preludesKey } = job;
    // A settling worker keeps the preludes of its last run; what else it keeps, its `ready` says.
    const known = slot.free ? slot.known.includes(preludesKey) : slot.lastKey === preludesKey;
    job.queued = !slot.free;
    slot.job = job;
    slot.free = false;
    slot.lastRun = id;
    slot.lastKey = preludesKey;
    job.started = performance.now();
    job.timer = setTimeout(() => this.kill(slot), timeoutMs + SANDBOX_GRACE_MS);
    slot.worker.ref();
    const message: ToWorker = {
      type: 'run',
      id,
      code,
      eventJson,
      ...(known ? {} : { preludes }),
      preludesKey,
      timeoutMs,
      memoryBytes,
    };
    slot.worker.postMessage(message);
  }

  private preludesKeyOf(preludes: readonly Prelude[]): number {
    let key = this.preludesKeys.get(preludes);
    if (key === undefined) this.preludesKeys.set(preludes, (key = ++this.lastPreludesKey));
    return key;
  }

  private receive(slot: Slot, message: FromWorker): void {
    if (message.type === 'ready') {
      if (slot.settling && message.settledMs !== undefined)
        slot.settledMs.set(slot.settling.preludesKey, message.settledMs);
      slot.settling = undefined;
      slot.ready = true;
      slot.known = message.known;
      slot.prepared = message.prepared;
      if (slot.job) {
        slot.job.queued = false;
        return;
      }
      slot.free = true;
      slot.worker.unref();
      this.dispatch();
    } else if (slot.job?.id !== message.id) {
      return;
    } else if (message.type === 'result') {
      const job = slot.job;
      slot.job = undefined;
      slot.settling = { since: performance.now(), preludesKey: job.preludesKey };
      slot.worker.unref();
      this.finish(job, message.outcome);
      this.dispatch();
    } else {
      void this.answer(slot, slot.job, message.callId, message.method, message.argsJson);
    }
  }

  /** Runs a host call on the caller's handler and posts the reply JSON back. */
  private async answer(slot: Slot, job: Job, callId: number, method: string, argsJson: string) {
    let replyJson: string;
    try {
      const args = JSON.parse(argsJson) as unknown[];
      const value = await job.request.host(method, args);
      replyJson = JSON.stringify({ ok: true, value });
    } catch (error) {
      replyJson = JSON.stringify({
        ok: false,
        message: messageOf(error),
        outcome: outcomeOf(error),
      });
    }
    if (slot.job !== job || !this.slots.has(slot)) return;
    const message: ToWorker = { type: 'host-reply', id: job.id, callId, replyJson };
    slot.worker.postMessage(message);
  }

  /** The worker overran its deadline and grace: terminate it; the bot timed out. */
  private kill(slot: Slot): void {
    const job = slot.job;
    if (!job || !this.slots.delete(slot)) return;
    this.terminate(slot);
    this.finish(job, { status: 'timeout', console: '' });
    this.replace();
  }

  /** The worker crashed or exited: fail its bot, and replace it. */
  private retire(slot: Slot, error: Error): void {
    if (!this.slots.delete(slot)) return;
    this.terminate(slot);
    const code = (error as { code?: unknown }).code;
    if (slot.job?.queued) {
      // It never started this run (it could not free its last isolate): another worker will.
      clearTimeout(slot.job.timer);
      this.queue.unshift(slot.job);
    } else if (slot.job) {
      const outOfMemory = code === 'ERR_WORKER_OUT_OF_MEMORY';
      const outcome: WorkerOutcome = outOfMemory
        ? { status: 'memory', console: '' }
        : { status: 'error', message: `The sandbox worker crashed: ${error.message}`, console: '' };
      this.finish(slot.job, outcome);
    } else if (!slot.ready && this.queue.length > 0) {
      // It never started: fail one waiting bot rather than respawning forever.
      const job = this.queue.shift() as Job;
      job.resolve(failed(`The sandbox worker could not start: ${error.message}`, 0));
    }
    if (slot.ready) this.replace();
    else this.dispatch();
  }

  private terminate(slot: Slot): void {
    const done = slot.worker.terminate().finally(() => this.terminating.delete(done));
    this.terminating.add(done);
  }

  /** Keeps the pool warm after losing a worker that had been working. */
  private replace(): void {
    if (this.closed) return;
    if (this.slots.size < this.size) this.spawn();
    this.dispatch();
  }

  private finish(job: Job, outcome: WorkerOutcome): void {
    clearTimeout(job.timer);
    job.resolve(resultOf(outcome, performance.now() - job.started));
  }
}

/**
 * Under vitest or tsx the worker is TypeScript source. On Node 20 `execArgv: ['--import', 'tsx']`
 * does not reach a worker's module loader (nodejs/node#47747, fixed in Node 22), so the worker
 * starts from a tiny data: module that registers tsx's loader, then imports sandbox-worker.ts.
 */
function sourceWorkerUrl(): URL {
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const worker = JSON.stringify(new URL('./sandbox-worker.ts', import.meta.url).href);
  const source = `(await import(${tsx})).register();\nawait import(${worker});\n`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}

function poolSize(requested: number | undefined): number {
  return Math.max(1, Math.floor(requested ?? availableParallelism()) || 1);
}

function resultOf(outcome: WorkerOutcome, durationMs: number): SandboxResult {
  if (outcome.status !== 'ok') return { ...outcome, durationMs };
  const { valueJson, hl7, console } = outcome;
  if (hl7 !== undefined) return { status: 'ok', hl7, console, durationMs };
  const value: unknown = valueJson === undefined ? undefined : JSON.parse(valueJson);
  return { status: 'ok', value, console, durationMs };
}

function failed(message: string, durationMs: number): SandboxResult {
  return { status: 'error', message, console: '', durationMs };
}

function closedOutcome(): WorkerOutcome {
  return { status: 'error', message: 'The sandbox pool is closed', console: '' };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The OperationOutcome a host error carries (e.g. a FhirError's `outcome`), if any. */
function outcomeOf(error: unknown): unknown {
  const outcome = (error as { outcome?: { resourceType?: unknown } } | null)?.outcome;
  return outcome?.resourceType === 'OperationOutcome' ? outcome : undefined;
}

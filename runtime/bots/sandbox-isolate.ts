/**
 * One bot execution inside a worker: a NEW QuickJS runtime and context (fresh globals) with a
 * memory limit, a stack limit and an interrupt handler at the deadline; the preludes, the
 * bootstrap (console, `fhir`), the bot's code; then `handler(fhir, event)`, running pending jobs
 * and waiting for host replies until its promise settles. Everything is disposed afterwards.
 *
 * Making the runtime and context and evaluating the preludes and bootstrap is most of the cost
 * and depends on nothing the caller sends, so a worker prepares its next isolate while it waits
 * (`prepareIsolate`), and a request finds it ready; freeing it waits until the outcome is sent.
 * At concurrency 1 the next request comes before a worker is done, so every microsecond of it
 * counts: the console and `fhir` client are host functions, and the JavaScript they need is
 * compiled on first use (sandbox-bootstrap.ts). That took the bootstrap from 3.4 to 2.1 KB and its
 * compiling from 0.22 to 0.12 ms, and an echo in the server's process from 0.43 to 0.35 ms (0.26 →
 * 0.17 ms in the pool).
 * Each isolate still runs one bot once: nothing a bot does outlives its execution.
 */
import type {
  VmCallResult,
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from 'quickjs-emscripten';
import {
  BOOTSTRAP_SOURCE,
  commonJsWrapper,
  looksLikeModule,
  REPLY_SOURCE,
  SHOW_SOURCE,
  SHOWN_CHARS,
} from './sandbox-bootstrap.js';
import { ConsoleTail } from './sandbox-console.js';
import type { Prelude, RunMessage, WorkerOutcome } from './sandbox-types.js';

/** Sends `fhir.<method>` to the main thread; resolves to the reply JSON, never rejects. */
export type HostCaller = (method: string, argsJson: string) => Promise<string>;

/** QuickJS's stack limit; the worker's native stack must be far deeper (see sandbox-pool.ts). */
const STACK_BYTES = 256 * 1024;
/** Concurrent `fhir` calls one execution may have in flight. */
const MAX_HOST_CALLS_IN_FLIGHT = 256;
/**
 * Of those, how many the main thread runs at once; the others wait here, and are dropped if the
 * bot ends first. One execution is one HTTP request: it must not take over the server's thread
 * and its database with hundreds of writes at once.
 */
const HOST_CALLS_AT_ONCE = 4;
/** The `fhir` client's methods, each sent to the main thread by name. */
const FHIR_METHODS = [
  'readResource',
  'searchResources',
  'searchOne',
  'createResource',
  'updateResource',
  'deleteResource',
  'graphql',
] as const;
/** The JavaScript the console and `fhir` host functions need, and the original each is made with. */
const HELPERS = {
  show: { source: SHOW_SOURCE, uses: 'stringify' },
  reply: { source: REPLY_SOURCE, uses: 'parse' },
} as const;
/** The console's methods and the prefix of their lines. */
const CONSOLE_METHODS = { log: '', info: '', debug: '', warn: 'WARN ', error: 'ERROR ' } as const;

/** The most each QuickJS module's WebAssembly memory may grow to, when bounded. */
const memoryMaximums = new WeakMap<object, number>();

/** Says how far `memory`, the WebAssembly memory of a QuickJS module, may grow. */
export function noteMemoryMaximum(memory: object, bytes: number): void {
  memoryMaximums.set(memory, bytes);
}

class Failure extends Error {
  constructor(
    readonly status: 'error' | 'timeout' | 'memory',
    message: string = status,
  ) {
    super(message);
  }
}

/** The global through which preludes read their texts (see `Prelude`). */
const TEXT_FUNCTION = '__graphirText';
/** Trusted set-up code (preludes, bootstrap) gets this long; the bot's deadline starts later. */
const PREPARE_MS = 10_000;

/** A fresh isolate with the preludes and bootstrap evaluated, for one run of one bot. */
export interface PreparedIsolate {
  readonly preludesKey: number;
  run(request: RunMessage, callHost: HostCaller): Promise<WorkerOutcome>;
  /** False when freeing the QuickJS runtime failed: the WebAssembly module may be damaged. */
  tryDispose(): boolean;
}

export interface IsolateRun {
  readonly outcome: WorkerOutcome;
  /** Frees the isolate, once the outcome is on its way; false as in `tryDispose`. */
  readonly dispose: () => boolean;
}

/** Throws (after freeing what it made) when the preludes or the bootstrap fail. */
export function prepareIsolate(
  module: QuickJSWASMModule,
  preludes: readonly Prelude[],
  preludesKey: number,
): PreparedIsolate {
  const execution = new Execution(module, preludesKey);
  try {
    execution.prepare(preludes);
  } catch (error) {
    execution.dispose();
    throw error;
  }
  return execution;
}

/** Runs one bot in `isolate`, prepared ahead with the request's preludes, or in one made now. */
export async function runIsolate(
  module: QuickJSWASMModule,
  request: RunMessage,
  preludes: readonly Prelude[],
  callHost: HostCaller,
  isolate?: PreparedIsolate,
): Promise<IsolateRun> {
  if (isolate && isolate.preludesKey !== request.preludesKey) {
    isolate.tryDispose();
    isolate = undefined;
  }
  let execution = isolate;
  if (!execution) {
    const made = new Execution(module, request.preludesKey);
    try {
      made.prepare(preludes);
    } catch (error) {
      return { outcome: made.outcomeOf(error), dispose: () => made.tryDispose() };
    }
    execution = made;
  }
  const outcome = await execution.run(request, callHost);
  return { outcome, dispose: () => execution.tryDispose() };
}

class Execution implements PreparedIsolate {
  private deadline = Date.now() + PREPARE_MS;
  private memoryBytes = Infinity;
  private readonly runtime: QuickJSRuntime;
  private readonly vm: QuickJSContext;
  private readonly console = new ConsoleTail();
  private readonly inFlight = new Set<QuickJSDeferredPromise>();
  /** `fhir` calls not yet sent to the main thread (HOST_CALLS_AT_ONCE are running). */
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  /**
   * Characters of `fhir` call arguments sent or waiting: they count against the memory limit,
   * since they live outside QuickJS's heap (here and on the main thread).
   */
  private hostChars = 0;
  /** Set when those went past the memory limit: the bot is stopped as if its heap had. */
  private exhausted = false;
  private callHost: HostCaller = () => Promise.reject(new Error('No bot is running'));
  private api: QuickJSHandle | undefined;
  /** The isolate's original `Error`, `JSON.parse` and `JSON.stringify`, from the bootstrap. */
  private originals: Record<'Error' | 'parse' | 'stringify', QuickJSHandle> | undefined;
  /** SHOW_SOURCE's and REPLY_SOURCE's functions, once compiled. */
  private readonly helpers: Partial<Record<keyof typeof HELPERS, QuickJSHandle>> = {};
  private interrupted = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly module: QuickJSWASMModule,
    readonly preludesKey: number,
  ) {
    this.runtime = module.newRuntime();
    this.runtime.setMaxStackSize(STACK_BYTES);
    this.runtime.setInterruptHandler(
      () => this.exhausted || (this.interrupted ||= Date.now() >= this.deadline),
    );
    this.runtime.setModuleLoader((name) => ({
      error: new Error(`Cannot find module '${name}': bots cannot import modules`),
    }));
    this.vm = this.runtime.newContext();
  }

  prepare(preludes: readonly Prelude[]): void {
    const texts = new Map<string, string>();
    for (const prelude of preludes) {
      if (typeof prelude !== 'string') texts.set(prelude.name, prelude.text);
    }
    if (texts.size > 0) this.lendTexts(texts);
    const scripts = preludes.filter((prelude) => typeof prelude === 'string');
    if (texts.size > 0) scripts.push(`delete globalThis.${TEXT_FUNCTION};`);
    this.api = this.bootstrap(scripts);
  }

  async run(request: RunMessage, callHost: HostCaller): Promise<WorkerOutcome> {
    this.deadline = Date.now() + request.timeoutMs;
    this.memoryBytes = request.memoryBytes;
    this.runtime.setMemoryLimit(request.memoryBytes);
    this.callHost = callHost;
    try {
      return await this.execute(request);
    } catch (error) {
      return this.outcomeOf(error);
    }
  }

  tryDispose(): boolean {
    try {
      this.dispose();
      return true;
    } catch {
      return false;
    }
  }

  private async execute(request: RunMessage): Promise<WorkerOutcome> {
    const { vm } = this;
    const api = this.api!;
    using exports = await this.loadExports(api, request.code);
    using invoke = vm.getProp(api, 'invoke');
    using eventJson = vm.newString(request.eventJson);
    using promise = this.check(vm.callFunction(invoke, vm.undefined, exports, eventJson));
    using settled = await this.settle(promise);
    const text = vm.getString(settled);
    const console = this.console.text();
    if (text.startsWith('h')) return { status: 'ok', hl7: text.slice(1), console };
    return text === 'u'
      ? { status: 'ok', console }
      : { status: 'ok', valueJson: text.slice(1), console };
  }

  outcomeOf(error: unknown): WorkerOutcome {
    const console = this.console.text();
    if (this.exhausted) return { status: 'memory', console };
    if (this.interrupted) return { status: 'timeout', console };
    if (!(error instanceof Failure)) {
      const message = error instanceof Error ? error.message : String(error);
      // V8's own stack limit, hit inside QuickJS before QuickJS's (the worker then retires).
      if (error instanceof RangeError) return { status: 'error', message, console };
      return { status: 'error', message: `The sandbox failed: ${message}`, console };
    }
    return error.status === 'error'
      ? { status: 'error', message: error.message, console }
      : { status: error.status, console };
  }

  dispose(): void {
    this.waiting.length = 0;
    for (const deferred of this.inFlight) deferred.dispose();
    this.inFlight.clear();
    const handles = [...Object.values(this.originals ?? {}), ...Object.values(this.helpers)];
    for (const handle of [...handles, this.api]) handle?.dispose();
    this.api = undefined;
    this.vm.dispose();
    this.runtime.dispose();
  }

  /** `__graphirText(name)` for the preludes: the text of that name, or undefined. */
  private lendTexts(texts: ReadonlyMap<string, string>): void {
    const { vm } = this;
    using read = vm.newFunction(TEXT_FUNCTION, (name) => {
      const text = texts.get(vm.getString(name));
      return text === undefined ? vm.undefined : vm.newString(text);
    });
    vm.defineProp(vm.global, TEXT_FUNCTION, { value: read, configurable: true });
  }

  /**
   * Evaluates the preludes' scripts, then the bootstrap, as one script: each evaluation has a
   * fixed cost (four small ones took 0.13 ms of an isolate's 0.47 ms). Sets the console's host
   * functions on the global object and calls the bootstrap with the `fhir` client's; returns
   * its `{ cjs, invoke, … }`.
   */
  private bootstrap(preludes: readonly string[]): QuickJSHandle {
    const { vm } = this;
    // Each prelude is a statement of its own; the bootstrap's function is the script's value.
    const source = [...preludes, BOOTSTRAP_SOURCE].join('\n;\n');
    using factory = this.evaluate(source, 'bootstrap.js');
    using consoleApi = vm.newObject();
    for (const [name, prefix] of Object.entries(CONSOLE_METHODS)) {
      using log = vm.newFunction(name, (...args) => this.log(prefix, args));
      vm.setProp(consoleApi, name, log);
    }
    vm.setProp(vm.global, 'console', consoleApi);
    using fhir = vm.newObject();
    for (const name of FHIR_METHODS) {
      using method = vm.newFunction(name, (...args) => this.fhirCall(name, args));
      vm.setProp(fhir, name, method);
    }
    const api = this.check(vm.callFunction(factory, vm.undefined, fhir));
    this.originals = {
      Error: vm.getProp(api, 'Error'),
      parse: vm.getProp(api, 'parse'),
      stringify: vm.getProp(api, 'stringify'),
    };
    return api;
  }

  /** SHOW_SOURCE's or REPLY_SOURCE's function, compiled now if not yet; or what it threw. */
  private helper(name: keyof typeof HELPERS): QuickJSHandle | { error: QuickJSHandle } {
    const made = this.helpers[name];
    if (made) return made;
    const { vm } = this;
    const { source, uses } = HELPERS[name];
    const compiled = vm.evalCode(source, `${name}.js`);
    if (compiled.error) return { error: compiled.error };
    using factory = compiled.value;
    const { Error: errorType, [uses]: original } = this.originals!;
    const helper = vm.callFunction(factory, vm.undefined, errorType, original);
    if (helper.error) return { error: helper.error };
    this.helpers[name] = helper.value;
    return helper.value;
  }

  /**
   * `console.<method>(…args)`: one line of the arguments as `show` gives them, cut at SHOWN_CHARS
   * characters; arguments past that are not read at all.
   */
  private log(prefix: string, args: QuickJSHandle[]): VmCallResult<QuickJSHandle> | undefined {
    const { vm } = this;
    let line = prefix;
    for (const [index, arg] of args.entries()) {
      if (line.length > SHOWN_CHARS) break;
      const show = this.helper('show');
      if ('error' in show) return show;
      const shown = vm.callFunction(show, vm.undefined, arg);
      // Only the time or memory limit gets through show's catch: it ends the bot.
      if (shown.error) return shown;
      line += (index > 0 ? ' ' : '') + vm.getString(shown.value);
      shown.value.dispose();
    }
    this.console.push(
      line.length > SHOWN_CHARS ? `${line.slice(0, SHOWN_CHARS)}… (truncated)` : line,
    );
    return undefined;
  }

  /**
   * `fhir.<method>(…args)`: a promise, rejected when the arguments are not JSON (as the bot's own
   * `JSON.stringify` would throw), else settled by the main thread's reply.
   */
  private fhirCall(
    method: string,
    args: QuickJSHandle[],
  ): VmCallResult<QuickJSHandle> | QuickJSHandle {
    const { vm } = this;
    using list = vm.newArray();
    args.forEach((arg, index) => vm.setProp(list, index, arg));
    const json = vm.callFunction(this.originals!.stringify, vm.undefined, list);
    if (json.error && this.interrupted) return json;
    const deferred = vm.newPromise();
    if (json.error) {
      deferred.reject(json.error);
      json.error.dispose();
      return deferred.handle;
    }
    const argsJson = vm.getString(json.value);
    json.value.dispose();
    try {
      this.hostCall(method, argsJson, deferred);
    } catch (error) {
      using thrown = vm.newError({ name: 'Error', message: (error as Error).message });
      deferred.reject(thrown);
    }
    return deferred.handle;
  }

  private async loadExports(api: QuickJSHandle, code: string): Promise<QuickJSHandle> {
    const { vm } = this;
    if (looksLikeModule(code)) {
      using namespace = this.evaluate(code, 'bot.mjs', 'module');
      return this.settle(namespace);
    }
    using wrapper = this.evaluate(commonJsWrapper(code), 'bot.js');
    using cjs = vm.getProp(api, 'cjs');
    return this.check(vm.callFunction(cjs, vm.undefined, wrapper));
  }

  private evaluate(source: string, filename: string, type: 'global' | 'module' = 'global') {
    const result = this.vm.evalCode(source, filename, { type });
    if (result.error) throw this.failureOf(result.error, filename);
    return result.value;
  }

  private check(result: { value: QuickJSHandle } | { error: QuickJSHandle }): QuickJSHandle {
    if ('error' in result && result.error) throw this.failureOf(result.error);
    return (result as { value: QuickJSHandle }).value;
  }

  /** Sends `fhir.<method>` to the main thread; its reply settles `deferred`. */
  private hostCall(method: string, argsJson: string, deferred: QuickJSDeferredPromise): void {
    if (this.inFlight.size >= MAX_HOST_CALLS_IN_FLIGHT) {
      throw new Error(`More than ${MAX_HOST_CALLS_IN_FLIGHT} fhir calls at once`);
    }
    this.hostChars += argsJson.length;
    if (this.hostChars > this.memoryBytes) {
      this.exhausted = true;
      throw new Error('The bot ran past its memory limit');
    }
    this.inFlight.add(deferred);
    const send = () => {
      this.running++;
      void this.callHost(method, argsJson).then((replyJson) => {
        this.running--;
        this.hostChars -= argsJson.length;
        this.waiting.shift()?.();
        if (!this.inFlight.delete(deferred)) return;
        try {
          this.settleReply(deferred, replyJson);
        } catch {
          deferred.dispose();
        }
        this.wake?.();
      });
    };
    if (this.running < HOST_CALLS_AT_ONCE) send();
    else this.waiting.push(send);
  }

  /** The reply's value resolves `deferred`; what the bootstrap's `reply` throws rejects it. */
  private settleReply(deferred: QuickJSDeferredPromise, replyJson: string): void {
    const { vm } = this;
    const reply = this.helper('reply');
    if ('error' in reply) {
      deferred.reject(reply.error);
      return reply.error.dispose();
    }
    using text = vm.newString(replyJson);
    const settled = vm.callFunction(reply, vm.undefined, text);
    if (settled.error) deferred.reject(settled.error);
    else deferred.resolve(settled.value);
    (settled.error ?? settled.value).dispose();
  }

  /** Runs jobs and waits for host replies until `handle` (a promise or a plain value) settles. */
  private async settle(handle: QuickJSHandle): Promise<QuickJSHandle> {
    for (;;) {
      const jobs = this.runtime.executePendingJobs();
      if (jobs.error) throw this.failureOf(jobs.error);
      if (this.exhausted) throw new Failure('memory');
      const state = this.vm.getPromiseState(handle);
      if (state.type === 'fulfilled') return state.notAPromise ? handle.dup() : state.value;
      if (state.type === 'rejected') throw this.failureOf(state.error);
      if (this.inFlight.size === 0) {
        throw new Failure('error', 'The bot awaited a promise that never settles');
      }
      await this.nextReply();
    }
  }

  private async nextReply(): Promise<void> {
    const remaining = this.deadline - Date.now();
    if (remaining <= 0) {
      this.interrupted = true;
      throw new Failure('timeout');
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, remaining);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = undefined;
  }

  /** Turns a thrown QuickJS value (disposed here) into a Failure. */
  private failureOf(handle: QuickJSHandle, filename?: string): Failure {
    const thrown: unknown = handle.alive ? this.vm.dump(handle) : undefined;
    if (handle.alive) handle.dispose();
    if (this.exhausted) return new Failure('memory');
    if (this.interrupted) return new Failure('timeout');
    const { name, message, stack } = describe(thrown);
    if (name === 'InternalError' && /out of memory/i.test(message)) return new Failure('memory');
    if (thrown === null && this.nearMemoryLimit()) return new Failure('memory');
    if (name === 'SyntaxError' && filename !== undefined) {
      const where = /\((.*?)\)|at (\S+)/.exec(stack)?.slice(1).find(Boolean);
      return new Failure('error', `Syntax error in ${where ?? filename}: ${message}`);
    }
    return new Failure('error', message);
  }

  /** QuickJS throws `null` when it cannot even allocate the out-of-memory error. */
  private nearMemoryLimit(): boolean {
    // Or the WebAssembly memory could not grow: it is bounded (sandbox-worker.ts).
    const memory = this.module.getWasmMemory() as unknown as { buffer: ArrayBuffer };
    const maximum = memoryMaximums.get(memory);
    if (maximum !== undefined && memory.buffer.byteLength + this.memoryBytes / 8 >= maximum)
      return true;
    using usage = this.runtime.computeMemoryUsage();
    const used = this.vm.dump(usage) as { memory_used_size?: number };
    return (used.memory_used_size ?? 0) > this.memoryBytes * 0.9;
  }
}

function describe(thrown: unknown): { name?: string; message: string; stack: string } {
  if (thrown && typeof thrown === 'object' && 'message' in thrown) {
    const { name, message, stack } = thrown as Record<string, unknown>;
    return {
      name: typeof name === 'string' ? name : undefined,
      message: String(message),
      stack: typeof stack === 'string' ? stack : '',
    };
  }
  if (typeof thrown === 'string') return { message: thrown, stack: '' };
  let message: string;
  try {
    message = JSON.stringify(thrown) ?? String(thrown);
  } catch {
    message = String(thrown);
  }
  return { message, stack: '' };
}

/**
 * One bot execution inside a worker: a NEW QuickJS runtime and context (fresh globals) with a
 * memory limit, a stack limit and an interrupt handler at the deadline; the preludes, the
 * console and the `fhir` client, the bot's code; then `handler(fhir, event)`, running pending jobs
 * and waiting for host replies until its promise settles. Everything is disposed afterwards.
 *
 * Making the runtime and context and evaluating the preludes is most of the cost and depends on
 * nothing the caller sends, so a worker prepares its next isolate while it waits
 * (`prepareIsolate`), and a request finds it ready; freeing it waits until the outcome is sent.
 * At concurrency 1 the next request comes before a worker is done, so every microsecond of it
 * counts: the glue between the isolate and the worker (finding the handler, parsing the event,
 * the CommonJS wrapper's `module`, freezing `fhir`) is host calls on the isolate's original
 * functions, captured before any other code runs, and the little JavaScript that must run inside
 * is compiled on first use (sandbox-helpers.ts). Evaluating a 2.1 KB bootstrap script for that
 * glue took 0.10 ms of an isolate's 0.20 ms.
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
  commonJsWrapper,
  HL7_TEXT_SOURCE,
  looksLikeModule,
  REPLY_SOURCE,
  SHOW_SOURCE,
  SHOWN_CHARS,
} from './sandbox-helpers.js';
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
/** The JavaScript compiled on first use (sandbox-helpers.ts). */
const HELPERS = { show: SHOW_SOURCE, reply: REPLY_SOURCE, hl7Text: HL7_TEXT_SOURCE } as const;
/** The global whose instances a bot returns as HL7 text (`WorkerOutcome.hl7`). */
const HL7_CLASS = 'Hl7Message';
/** A prelude script defines this to map the parsed event before the handler sees it. */
const REVIVE_EVENT = '__graphirReviveEvent';
const NO_HANDLER =
  'The bot exports no handler: use "export async function handler(fhir, event)" or "exports.handler = async (fhir, event) => …"';
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

/** Trusted set-up code (the preludes) gets this long; the bot's deadline starts later. */
const PREPARE_MS = 10_000;

/** A fresh isolate with the console, the `fhir` client and the preludes, for one run of one bot. */
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

/** Throws (after freeing what it made) when the preludes fail. */
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
  /**
   * The isolate's own functions, read from its global object before any other code ran: a bot
   * that replaces `JSON.parse` or `Reflect.get` changes nothing the glue uses.
   */
  private originals: Originals | undefined;
  /** The `fhir` client: an object of host functions, frozen. */
  private fhir: QuickJSHandle | undefined;
  /** `globalThis.__graphirReviveEvent` as the preludes left it, if a function. */
  private revive: QuickJSHandle | undefined;
  /** The `Hl7Message` class of a prelude script, if any. */
  private hl7Class: QuickJSHandle | undefined;
  /** Lazy globals' values, by name, once a bot has read them. */
  private readonly loaded = new Map<string, QuickJSHandle>();
  /** The helpers' functions, once compiled. */
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

  /**
   * Captures the originals, sets the console and the `fhir` client, defines the lazy globals and
   * evaluates the preludes' scripts as one script: each evaluation has a fixed cost (four small
   * ones took 0.13 ms of an isolate's 0.47 ms).
   */
  prepare(preludes: readonly Prelude[]): void {
    const { vm } = this;
    this.originals = captureOriginals(vm);
    using consoleApi = vm.newObject();
    for (const [name, prefix] of Object.entries(CONSOLE_METHODS)) {
      using log = vm.newFunction(name, (...args) => this.log(prefix, args));
      vm.setProp(consoleApi, name, log);
    }
    vm.setProp(vm.global, 'console', consoleApi);
    const fhir = (this.fhir = vm.newObject());
    for (const name of FHIR_METHODS) {
      using method = vm.newFunction(name, (...args) => this.fhirCall(name, args));
      vm.setProp(fhir, name, method);
    }
    this.check(vm.callFunction(this.originals.freeze, vm.undefined, fhir)).dispose();
    const scripts: string[] = [];
    for (const prelude of preludes) {
      if (typeof prelude === 'string') scripts.push(prelude);
      else this.defineLazy(prelude.global, prelude.source);
    }
    // Each prelude is a statement of its own.
    if (scripts.length > 0) this.evaluate(scripts.join('\n;\n'), 'preludes.js').dispose();
    this.revive = this.globalFunction(REVIVE_EVENT);
    if (!preludes.some((prelude) => typeof prelude !== 'string' && prelude.global === HL7_CLASS)) {
      this.hl7Class = this.globalFunction(HL7_CLASS);
    }
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
    const { Promise: promiseType, resolve, stringify } = this.originals!;
    using exports = await this.loadExports(request.code);
    using handler = this.handlerOf(exports);
    using event = this.eventOf(request.eventJson);
    using returned = this.check(vm.callFunction(handler, vm.undefined, this.fhir!, event));
    // As `await` would: a promise as it is, a thenable followed, anything else as its value.
    using promise = this.check(vm.callFunction(resolve, promiseType, returned));
    using result = await this.settle(promise);
    // The console is read last: `toString()` and `toJSON()` may still write to it.
    const hl7 = this.hl7TextOf(result);
    if (hl7 !== undefined) return { status: 'ok', hl7, console: this.console.text() };
    using json = this.check(vm.callFunction(stringify, vm.undefined, result));
    const console = this.console.text();
    return vm.typeof(json) === 'string'
      ? { status: 'ok', valueJson: vm.getString(json), console }
      : { status: 'ok', console };
  }

  /** The handler: `exports` itself, its `handler`, its `default`, or `default.handler`. */
  private handlerOf(exports: QuickJSHandle): QuickJSHandle {
    if (this.vm.typeof(exports) === 'function') return exports.dup();
    if (this.isObject(exports)) {
      const handler = this.read(exports, 'handler');
      if (this.vm.typeof(handler) === 'function') return handler;
      handler.dispose();
      using fallback = this.read(exports, 'default');
      if (this.vm.typeof(fallback) === 'function') return fallback.dup();
      if (this.isObject(fallback)) {
        const inner = this.read(fallback, 'handler');
        if (this.vm.typeof(inner) === 'function') return inner;
        inner.dispose();
      }
    }
    throw new Failure('error', NO_HANDLER);
  }

  /** The event parsed by the isolate's own `JSON.parse`, and revived if a prelude says how. */
  private eventOf(eventJson: string): QuickJSHandle {
    const { vm } = this;
    using text = vm.newString(eventJson);
    const event = this.check(vm.callFunction(this.originals!.parse, vm.undefined, text));
    if (!this.revive) return event;
    using parsed = event;
    return this.check(vm.callFunction(this.revive, vm.undefined, parsed));
  }

  /** `result`'s text if it is an `Hl7Message`: only a class the isolate has loaded can make one. */
  private hl7TextOf(result: QuickJSHandle): string | undefined {
    const type = this.hl7Class ?? this.loaded.get(HL7_CLASS);
    if (!type || !this.isObject(result)) return undefined;
    using text = this.check(this.callHelper('hl7Text', [type], result));
    return this.vm.typeof(text) === 'string' ? this.vm.getString(text) : undefined;
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
    const handles = [
      ...Object.values(this.originals ?? {}),
      ...Object.values(this.helpers),
      ...this.loaded.values(),
      this.fhir,
      this.revive,
      this.hl7Class,
    ];
    for (const handle of handles) handle?.dispose();
    this.originals = this.fhir = this.revive = this.hl7Class = undefined;
    this.loaded.clear();
    this.vm.dispose();
    this.runtime.dispose();
  }

  /**
   * `globalThis[name]` is `source` evaluated on the first read, in global scope, then that value;
   * until then it costs nothing. What the evaluation throws, the read throws.
   */
  private defineLazy(name: string, source: string): void {
    const { vm } = this;
    vm.defineProp(vm.global, name, {
      configurable: true,
      get: () => {
        let value = this.loaded.get(name);
        if (!value) {
          const evaluated = vm.evalCode(source, `${name}.js`);
          // Thrown from a host function, a handle is thrown in the isolate as it is.
          if (evaluated.error) throw evaluated.error;
          value = evaluated.value;
          this.loaded.set(name, value);
        }
        // The caller disposes what a host function returns.
        return value.dup();
      },
    });
  }

  /** `globalThis[name]` if it is a function: read by trusted code, before the bot's runs. */
  private globalFunction(name: string): QuickJSHandle | undefined {
    const value = this.vm.getProp(this.vm.global, name);
    if (this.vm.typeof(value) === 'function') return value;
    value.dispose();
    return undefined;
  }

  /** `object[key]` through the original `Reflect.get`: a getter that throws is the bot's error. */
  private read(object: QuickJSHandle, key: string): QuickJSHandle {
    using name = this.vm.newString(key);
    return this.check(this.vm.callFunction(this.originals!.get, this.vm.undefined, object, name));
  }

  private isObject(handle: QuickJSHandle): boolean {
    return this.vm.typeof(handle) === 'object' && !this.vm.sameValue(handle, this.vm.null);
  }

  /** The helper `name`, compiled now (called with `args`) if not yet, called with `value`. */
  private callHelper(
    name: keyof typeof HELPERS,
    args: readonly QuickJSHandle[],
    value: QuickJSHandle,
  ): VmCallResult<QuickJSHandle> {
    const { vm } = this;
    let helper = this.helpers[name];
    if (!helper) {
      const compiled = vm.evalCode(HELPERS[name], `${name}.js`);
      if (compiled.error) return compiled;
      using factory = compiled.value;
      const made = vm.callFunction(factory, vm.undefined, ...args);
      if (made.error) return made;
      helper = this.helpers[name] = made.value;
    }
    return vm.callFunction(helper, vm.undefined, value);
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
      const { Error: errorType, stringify } = this.originals!;
      const shown = this.callHelper('show', [errorType, stringify], arg);
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

  private async loadExports(code: string): Promise<QuickJSHandle> {
    const { vm } = this;
    if (looksLikeModule(code)) {
      using namespace = this.evaluate(code, 'bot.mjs', 'module');
      return this.settle(namespace);
    }
    using wrapper = this.evaluate(commonJsWrapper(code), 'bot.js');
    using module = vm.newObject();
    using exports = vm.newObject();
    vm.setProp(module, 'exports', exports);
    using require = vm.newFunction('require', (name) => {
      // Read without running the bot's code: a string as it is, anything else by its type.
      const text = vm.typeof(name) === 'string' ? vm.getString(name) : `(${vm.typeof(name)})`;
      throw new Error(`Cannot find module '${text}': bots cannot load modules`);
    });
    this.check(vm.callFunction(wrapper, exports, exports, module, require)).dispose();
    return this.read(module, 'exports');
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

  /** The reply's value resolves `deferred`; what the `reply` helper throws rejects it. */
  private settleReply(deferred: QuickJSDeferredPromise, replyJson: string): void {
    const { vm } = this;
    const { Error: errorType, parse } = this.originals!;
    using text = vm.newString(replyJson);
    const settled = this.callHelper('reply', [errorType, parse], text);
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

/** What the glue calls in the isolate: its own functions, as they were before any code ran. */
interface Originals {
  readonly Error: QuickJSHandle;
  readonly parse: QuickJSHandle;
  readonly stringify: QuickJSHandle;
  /** `Reflect.get`, to read the bot's objects. */
  readonly get: QuickJSHandle;
  readonly freeze: QuickJSHandle;
  readonly Promise: QuickJSHandle;
  /** `Promise.resolve`, called on `Promise`. */
  readonly resolve: QuickJSHandle;
}

function captureOriginals(vm: QuickJSContext): Originals {
  using json = vm.getProp(vm.global, 'JSON');
  using reflect = vm.getProp(vm.global, 'Reflect');
  using object = vm.getProp(vm.global, 'Object');
  const promise = vm.getProp(vm.global, 'Promise');
  return {
    Error: vm.getProp(vm.global, 'Error'),
    parse: vm.getProp(json, 'parse'),
    stringify: vm.getProp(json, 'stringify'),
    get: vm.getProp(reflect, 'get'),
    freeze: vm.getProp(object, 'freeze'),
    Promise: promise,
    resolve: vm.getProp(promise, 'resolve'),
  };
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

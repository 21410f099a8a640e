/**
 * One bot execution inside a worker: a NEW QuickJS runtime and context (fresh globals) with a
 * memory limit, a stack limit and an interrupt handler at the deadline; the preludes, the
 * console and the `fhir` client, the bot's code; then `handler(fhir, event)`, running pending jobs
 * and waiting for host replies until its promise settles. Everything is disposed afterwards.
 *
 * Making the runtime and context and evaluating the preludes is most of the cost and depends on
 * nothing the caller sends, so a worker prepares its next isolate while it waits
 * (`prepareIsolate`), and a request finds it ready; freeing it waits until the outcome is sent.
 * Each isolate still runs one bot once: nothing a bot does outlives its execution. The glue
 * between isolate and worker is in sandbox-glue.ts, the `fhir` calls' queue in
 * sandbox-host-calls.ts.
 */
import type {
  VmCallResult,
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from 'quickjs-emscripten';
import { ConsoleTail, installConsole } from './sandbox-console.js';
import { installLocaleMethods } from './sandbox-locale.js';
import { FhirClientParts } from './sandbox-fhir.js';
import { HL7_CLASS, IsolateGlue, LAZY_LOADER, type LazyGroup } from './sandbox-glue.js';
import { commonJsWrapper, looksLikeModule } from './sandbox-helpers.js';
import { HostCallQueue, type HostCaller } from './sandbox-host-calls.js';
import { digest, intl, randomBytes, randomUUID, url } from './sandbox-natives.js';
import { SandboxTimers, type Timer } from './sandbox-timers.js';
import {
  Failure,
  failureOfThrown,
  outcomeOfError,
  wasmMemoryNearMaximum,
} from './sandbox-failure.js';
import type { Prelude, RunMessage, WorkerOutcome } from './sandbox-types.js';

/** QuickJS's stack limit; the worker's native stack must be far deeper (see sandbox-pool.ts). */
const STACK_BYTES = 256 * 1024;
/** A prelude script defines this to map the parsed event before the handler sees it. */
const REVIVE_EVENT = '__graphirReviveEvent';

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
  private readonly glue: IsolateGlue;
  private readonly console = new ConsoleTail();
  /** The run's `fhir` calls; none before the run starts. */
  private hostCalls: HostCallQueue<QuickJSDeferredPromise> | undefined;
  /** The bot's setTimeout and setInterval callbacks. */
  private readonly timers = new SandboxTimers<QuickJSHandle>((callback) => callback.dispose());
  /** What the isolate's own code calls the worker through (isolate/isolate-host.ts). */
  private host: QuickJSHandle | undefined;
  /** The `fhir` object the bot gets: a proxy over `fhirClient`. */
  private fhir: QuickJSHandle | undefined;
  private readonly fhirClient: FhirClientParts;
  /** QuickJS's own toLocale…String methods (sandbox-locale.ts). */
  private localeOriginals: QuickJSHandle[] = [];
  /** Lazy groups whose globals are defined when the client loads (sandbox-types.ts `Prelude`). */
  private deferred: LazyGroup[] = [];
  /** The execution's `event.baseUrl`, for the client. */
  private baseUrl = '';
  /** `globalThis.__graphirReviveEvent` as the preludes left it, if a function. */
  private revive: QuickJSHandle | undefined;
  /** The `Hl7Message` class of a prelude script, if any. */
  private hl7Class: QuickJSHandle | undefined;
  private interrupted = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly module: QuickJSWASMModule,
    readonly preludesKey: number,
  ) {
    this.runtime = module.newRuntime();
    this.runtime.setMaxStackSize(STACK_BYTES);
    this.runtime.setInterruptHandler(
      () => this.overMemory || (this.interrupted ||= Date.now() >= this.deadline),
    );
    this.runtime.setModuleLoader((name) => ({
      error: new Error(`Cannot find module '${name}': bots cannot import modules`),
    }));
    this.vm = this.runtime.newContext();
    this.glue = new IsolateGlue(this.vm, (result) => this.check(result));
    this.fhirClient = new FhirClientParts(
      this.vm,
      this.glue,
      {
        evaluate: (source, filename) => this.evaluate(source, filename),
        check: (result) => this.check(result),
        beforeClient: () => this.defineDeferred(),
      },
      () => this.host!,
      () => this.baseUrl,
    );
  }

  /**
   * Sets the console and the `fhir` proxy, defines the lazy groups not deferred with Date's and
   * Number's locale methods, and evaluates the preludes' scripts, as one script (each evaluation
   * has a fixed cost).
   */
  prepare(preludes: readonly Prelude[]): void {
    const { vm, glue } = this;
    installConsole(vm, glue, this.console);
    const host = (this.host = vm.newObject());
    using call = vm.newFunction('call', (method, ...args) =>
      this.hostCall(vm.typeof(method) === 'string' ? vm.getString(method) : '', args),
    );
    vm.setProp(host, 'call', call);
    this.addNatives(host);
    glue.freeze(host);
    this.fhir = glue.proxy(this.fhirClient);
    const groups = preludes.filter((prelude) => typeof prelude !== 'string');
    this.deferred = groups.filter((group) => group.deferred);
    const now = groups.filter((group) => !group.deferred);
    const scripts = now.length > 0 ? [this.webPlatformScript(now)] : [];
    for (const prelude of preludes) if (typeof prelude === 'string') scripts.push(prelude);
    // Each prelude is a statement of its own.
    if (scripts.length > 0) this.evaluateWithLoader(scripts.join('\n;\n'), 'preludes.js');
    this.revive = glue.globalFunction(REVIVE_EVENT);
    if (!groups.some((group) => group.globals.includes(HL7_CLASS))) {
      this.hl7Class = glue.globalFunction(HL7_CLASS);
    }
  }

  /**
   * Installs Date's and Number's locale methods, which answer through the Intl group (once, for
   * preludes with groups both deferred and not), and returns the script that defines `groups`'
   * globals (IsolateGlue.defineLazy; evaluateWithLoader runs it).
   */
  private webPlatformScript(groups: readonly LazyGroup[]): string {
    if (this.localeOriginals.length === 0) {
      this.localeOriginals = installLocaleMethods(this.vm, this.glue);
    }
    return this.glue.defineLazy(groups, this.host!);
  }

  private evaluateWithLoader(script: string, filename: string): void {
    try {
      this.evaluate(script, filename).dispose();
    } finally {
      this.glue.takeGlobal(LAZY_LOADER).dispose();
    }
  }

  /**
   * The deferred groups, defined as the client first loads (its code uses URL, Blob…). The bot's
   * code has run by then and may have changed the built-ins the definitions call: only its own
   * isolate can be the worse for it.
   */
  private defineDeferred(): void {
    if (this.deferred.length === 0) return;
    const groups = this.deferred;
    this.deferred = [];
    this.evaluateWithLoader(this.webPlatformScript(groups), 'web-platform.js');
  }

  async run(request: RunMessage, callHost: HostCaller): Promise<WorkerOutcome> {
    this.deadline = Date.now() + request.timeoutMs;
    this.memoryBytes = request.memoryBytes;
    this.runtime.setMemoryLimit(request.memoryBytes);
    this.hostCalls = new HostCallQueue(
      callHost,
      request.memoryBytes,
      (deferred, replyJson) => {
        try {
          this.glue.settleReply(deferred, replyJson);
        } catch {
          deferred.dispose();
        }
      },
      () => this.wake?.(),
    );
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

  private get overMemory(): boolean {
    return this.hostCalls?.overMemory ?? false;
  }

  private async execute(request: RunMessage): Promise<WorkerOutcome> {
    const { vm, glue } = this;
    using exports = await this.loadExports(request.code);
    using handler = glue.handlerOf(exports);
    using event = glue.eventOf(request.eventJson, this.revive);
    this.baseUrl = glue.stringAt(event, 'baseUrl') ?? '';
    // Read before the bot can change its event.
    const hl7Request = glue.isHl7Event(event);
    using returned = this.check(vm.callFunction(handler, vm.undefined, this.fhir!, event));
    using promise = glue.promiseOf(returned);
    using result = await this.settle(promise);
    // The console is read last: `toString()` and `toJSON()` may still write to it.
    const hl7 = glue.hl7TextOf(result, this.hl7Class, hl7Request);
    if (hl7 !== undefined) return { status: 'ok', hl7, console: this.console.text() };
    const valueJson = glue.jsonOf(result);
    const console = this.console.text();
    return valueJson === undefined
      ? { status: 'ok', console }
      : { status: 'ok', valueJson, console };
  }

  outcomeOf(error: unknown): WorkerOutcome {
    const console = this.console.text();
    if (this.overMemory) return { status: 'memory', console };
    if (this.interrupted) return { status: 'timeout', console };
    return outcomeOfError(error, console);
  }

  dispose(): void {
    for (const deferred of this.hostCalls?.drop() ?? []) deferred.dispose();
    this.timers.drop();
    this.fhirClient.dispose();
    const handles = [this.host, this.fhir, this.revive, this.hl7Class, ...this.localeOriginals];
    for (const handle of handles) handle?.dispose();
    this.localeOriginals = [];
    this.host = this.fhir = this.revive = this.hl7Class = undefined;
    this.glue.dispose();
    this.vm.dispose();
    this.runtime.dispose();
  }

  /**
   * The host's synchronous natives (isolate/isolate-host.ts `Natives`), behind one host function,
   * for the web platform's own code: it checks the arguments as the platform does, and passes
   * binary data as ArrayBuffers.
   */
  private addNatives(host: QuickJSHandle): void {
    const { vm } = this;
    const natives: Record<string, (...args: QuickJSHandle[]) => QuickJSHandle | void> = {
      setTimer: (callback, delay, repeat) =>
        vm.newNumber(
          this.timers.add(callback.dup(), vm.getNumber(delay), vm.dump(repeat) === true),
        ),
      clearTimer: (id) => this.timers.clear(vm.getNumber(id)),
      randomBytes: (length) => vm.newArrayBuffer(randomBytes(vm.getNumber(length)).buffer),
      randomUUID: () => vm.newString(randomUUID()),
      digest: (algorithm, data) => {
        using bytes = vm.getArrayBuffer(data);
        return vm.newArrayBuffer(digest(vm.getString(algorithm), bytes.value).buffer);
      },
      intl: (request) => vm.newString(intl(vm.getString(request))),
      // A copy: a small Buffer is a view on Node's shared pool.
      base64ToBytes: (base64) =>
        vm.newArrayBuffer(new Uint8Array(Buffer.from(vm.getString(base64), 'base64')).buffer),
      bytesToBase64: (data) => {
        using bytes = vm.getArrayBuffer(data);
        return vm.newString(Buffer.from(bytes.value).toString('base64'));
      },
      url: (input, base, property, value) => {
        const text = (handle: QuickJSHandle | undefined) =>
          handle && vm.typeof(handle) === 'string' ? vm.getString(handle) : undefined;
        return vm.newString(url(text(input)!, text(base), text(property), text(value)));
      },
    };
    using dispatch = vm.newFunction('native', (nameHandle, ...args) => {
      const name = vm.getString(nameHandle);
      if (!Object.hasOwn(natives, name)) throw new TypeError(`No native ${name}`);
      return natives[name](...args);
    });
    vm.setProp(host, 'native', dispatch);
  }

  /**
   * `host.call(method, …args)`: a promise, rejected when the arguments are not JSON (as the bot's
   * own `JSON.stringify` would throw), else settled by the main thread's reply.
   */
  private hostCall(
    method: string,
    args: QuickJSHandle[],
  ): VmCallResult<QuickJSHandle> | QuickJSHandle {
    const { vm } = this;
    const json = this.glue.argumentsJson(args);
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
      if (!this.hostCalls) throw new Error('No bot is running');
      this.hostCalls.add(deferred, method, argsJson);
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
    return this.glue.read(module, 'exports');
  }

  private evaluate(source: string, filename: string, type: 'global' | 'module' = 'global') {
    const result = this.vm.evalCode(source, filename, { type });
    if (result.error) throw this.failureOf(result.error, filename);
    return result.value;
  }

  private check(result: VmCallResult<QuickJSHandle>): QuickJSHandle {
    if (result.error) throw this.failureOf(result.error);
    return result.value;
  }

  /**
   * Runs jobs, fires due timers (one at a time, with the jobs each leaves) and waits for host
   * replies or the next timer until `handle` (a promise or a plain value) settles.
   */
  private async settle(handle: QuickJSHandle): Promise<QuickJSHandle> {
    for (;;) {
      const jobs = this.runtime.executePendingJobs();
      if (jobs.error) throw this.failureOf(jobs.error);
      if (this.overMemory) throw new Failure('memory');
      const state = this.vm.getPromiseState(handle);
      if (state.type === 'fulfilled') return state.notAPromise ? handle.dup() : state.value;
      if (state.type === 'rejected') throw this.failureOf(state.error);
      const now = Date.now();
      if (now >= this.deadline) {
        this.interrupted = true;
        throw new Failure('timeout');
      }
      const timer = this.timers.takeDue(now);
      if (timer) {
        this.fire(timer);
        continue;
      }
      if ((this.hostCalls?.size ?? 0) === 0 && this.timers.size === 0) {
        throw new Failure('error', 'The bot awaited a promise that never settles');
      }
      await this.nextEvent(this.timers.nextDue() ?? Infinity);
    }
  }

  /** Runs a timer's callback: what it throws is the bot's error, as an uncaught exception. */
  private fire(timer: Timer<QuickJSHandle>): void {
    // A timeout's callback is the caller's now; an interval's may clear it while it runs.
    using callback = timer.interval === undefined ? timer.callback : timer.callback.dup();
    this.check(this.vm.callFunction(callback, this.vm.undefined)).dispose();
  }

  /** Waits for a host reply, or until `until` (a timer due) or the deadline. */
  private async nextEvent(until: number): Promise<void> {
    const remaining = Math.min(this.deadline, until) - Date.now();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, remaining));
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
    if (this.overMemory) return new Failure('memory');
    if (this.interrupted) return new Failure('timeout');
    return failureOfThrown(thrown, filename, () => this.nearMemoryLimit());
  }

  /** QuickJS throws `null` when it cannot even allocate the out-of-memory error. */
  private nearMemoryLimit(): boolean {
    // Or the WebAssembly memory could not grow: it is bounded (sandbox-worker.ts).
    if (wasmMemoryNearMaximum(this.module.getWasmMemory(), this.memoryBytes / 8)) return true;
    using usage = this.runtime.computeMemoryUsage();
    const used = this.vm.dump(usage) as { memory_used_size?: number };
    return (used.memory_used_size ?? 0) > this.memoryBytes * 0.9;
  }
}

/**
 * The glue between a QuickJS isolate and its worker: finding the bot's handler, parsing the
 * event, reading a returned Hl7Message, showing console arguments, settling `fhir` replies. It is
 * host calls on the isolate's own functions, captured before any other code runs, so that a bot
 * that replaces `JSON.parse` or `Reflect.get` changes nothing the glue uses; the little that must
 * run inside as JavaScript is compiled on first use (sandbox-helpers.ts), since every isolate
 * would compile it afresh.
 */
import type {
  QuickJSContext,
  QuickJSDeferredPromise,
  QuickJSHandle,
  VmCallResult,
} from 'quickjs-emscripten';
import { HL7_V2_ER7 } from '../hl7/media-type.js';
import { HL7_TEXT_SOURCE, REPLY_SOURCE, SHOW_SOURCE } from './sandbox-helpers.js';
import type { Prelude } from './sandbox-types.js';

/** A lazy group of globals (sandbox-types.ts `Prelude`). */
export type LazyGroup = Exclude<Prelude, string>;

/** The value of a call into the isolate, or a throw of what it threw. */
export type Check = (result: VmCallResult<QuickJSHandle>) => QuickJSHandle;

/** The JavaScript compiled on first use (sandbox-helpers.ts). */
const HELPERS = { show: SHOW_SOURCE, reply: REPLY_SOURCE, hl7Text: HL7_TEXT_SOURCE } as const;
/** Where the loader of the lazy groups is while the preparation's scripts run. */
export const LAZY_LOADER = '__graphirLazy';
/** The global whose instances a bot returns as HL7 text. */
export const HL7_CLASS = 'Hl7Message';
const NO_HANDLER =
  'The bot exports no handler: use "export async function handler(fhir, event)" or "exports.handler = async (fhir, event) => …"';

/** What the glue calls in the isolate: its own functions, as they were before any code ran. */
interface Originals {
  readonly Error: QuickJSHandle;
  readonly parse: QuickJSHandle;
  readonly stringify: QuickJSHandle;
  /** `Reflect.get`, to read the bot's objects. */
  readonly get: QuickJSHandle;
  /** `Reflect.construct`, with `Proxy`, for proxies made from the worker. */
  readonly construct: QuickJSHandle;
  readonly Proxy: QuickJSHandle;
  readonly deleteProperty: QuickJSHandle;
  readonly freeze: QuickJSHandle;
  readonly Promise: QuickJSHandle;
  /** `Promise.resolve`, called on `Promise`. */
  readonly resolve: QuickJSHandle;
}

/** Thrown when the bot's exports hold no handler. */
export class NoHandlerError extends Error {
  constructor() {
    super(NO_HANDLER);
  }
}

export class IsolateGlue {
  private readonly originals: Originals;
  /** The helpers' functions, once compiled. */
  private readonly helpers: Partial<Record<keyof typeof HELPERS, QuickJSHandle>> = {};
  /** Lazy globals' values, by name, once a bot has read them. */
  private readonly loaded = new Map<string, QuickJSHandle>();

  /** Reads the originals: call before any other code runs in `vm`. */
  constructor(
    private readonly vm: QuickJSContext,
    private readonly check: Check,
  ) {
    this.originals = captureOriginals(vm);
  }

  /** The isolate's `Error`, as it was before any code ran. */
  get errorType(): QuickJSHandle {
    return this.originals.Error;
  }

  freeze(object: QuickJSHandle): void {
    this.check(this.vm.callFunction(this.originals.freeze, this.vm.undefined, object)).dispose();
  }

  /** The handler: `exports` itself, its `handler`, its `default`, or `default.handler`. */
  handlerOf(exports: QuickJSHandle): QuickJSHandle {
    const { vm } = this;
    if (vm.typeof(exports) === 'function') return exports.dup();
    if (this.isObject(exports)) {
      const handler = this.read(exports, 'handler');
      if (vm.typeof(handler) === 'function') return handler;
      handler.dispose();
      using fallback = this.read(exports, 'default');
      if (vm.typeof(fallback) === 'function') return fallback.dup();
      if (this.isObject(fallback)) {
        const inner = this.read(fallback, 'handler');
        if (vm.typeof(inner) === 'function') return inner;
        inner.dispose();
      }
    }
    throw new NoHandlerError();
  }

  /** The event parsed by the isolate's own `JSON.parse`, and revived by `revive` if given. */
  eventOf(eventJson: string, revive: QuickJSHandle | undefined): QuickJSHandle {
    const { vm } = this;
    using text = vm.newString(eventJson);
    const event = this.check(vm.callFunction(this.originals.parse, vm.undefined, text));
    if (!revive) return event;
    using parsed = event;
    return this.check(vm.callFunction(revive, vm.undefined, parsed));
  }

  /** As `await` would: a promise as it is, a thenable followed, anything else as its value. */
  promiseOf(value: QuickJSHandle): QuickJSHandle {
    const { Promise: promiseType, resolve } = this.originals;
    return this.check(this.vm.callFunction(resolve, promiseType, value));
  }

  /** `value` as JSON text through the isolate's own `JSON.stringify`; undefined when it has none. */
  jsonOf(value: QuickJSHandle): string | undefined {
    using json = this.check(
      this.vm.callFunction(this.originals.stringify, this.vm.undefined, value),
    );
    return this.vm.typeof(json) === 'string' ? this.vm.getString(json) : undefined;
  }

  /** The arguments of a `fhir` call as JSON text, or what `JSON.stringify` threw. */
  argumentsJson(args: readonly QuickJSHandle[]): VmCallResult<QuickJSHandle> {
    const { vm } = this;
    using list = vm.newArray();
    args.forEach((arg, index) => vm.setProp(list, index, arg));
    return vm.callFunction(this.originals.stringify, vm.undefined, list);
  }

  /**
   * Whether `event` (before the bot sees it) is an HL7 v2 request's: its answer is then ER7
   * whatever object the handler returns, as Medplum answers (a string stays text).
   */
  isHl7Event(event: QuickJSHandle): boolean {
    if (!this.isObject(event)) return false;
    using type = this.read(event, 'contentType');
    return this.vm.typeof(type) === 'string' && this.vm.getString(type) === HL7_V2_ER7;
  }

  /**
   * `result`'s ER7 text, `String(result.toString())`, if it is an `Hl7Message`, or answering an
   * HL7 request, a message of any copy of the class or a string; else undefined, and the result
   * is answered by the usual rule (an object as JSON). Only a class the isolate has loaded can
   * make an `Hl7Message`: `hl7Class` (a prelude's) or the lazy global once read.
   */
  hl7TextOf(
    result: QuickJSHandle,
    hl7Class: QuickJSHandle | undefined,
    hl7Request: boolean,
  ): string | undefined {
    if (hl7Request && this.vm.typeof(result) === 'string') return this.vm.getString(result);
    if (!this.isObject(result)) return undefined;
    const type = hl7Request ? this.vm.undefined : (hl7Class ?? this.loaded.get(HL7_CLASS));
    if (!type) return undefined;
    using text = this.check(this.callHelper('hl7Text', [], result, type));
    return this.vm.typeof(text) === 'string' ? this.vm.getString(text) : undefined;
  }

  /** A console argument as text; an error only when the time or memory limit ends the bot. */
  show(value: QuickJSHandle): VmCallResult<QuickJSHandle> {
    const { Error: errorType, stringify } = this.originals;
    return this.callHelper('show', [errorType, stringify], value);
  }

  /** The reply's value resolves `deferred`; what the `reply` helper throws rejects it. */
  settleReply(deferred: QuickJSDeferredPromise, replyJson: string): void {
    const { vm } = this;
    const { Error: errorType, parse } = this.originals;
    using text = vm.newString(replyJson);
    const settled = this.callHelper('reply', [errorType, parse], text);
    if (settled.error) deferred.reject(settled.error);
    else deferred.resolve(settled.value);
    (settled.error ?? settled.value).dispose();
  }

  /**
   * Lazy groups: each `source` is an expression for a function `(host) => ({ [global]: value, … })`,
   * called with `host` on the first read of any of its `globals`, in global scope; each global is
   * then its value. Until then a group costs nothing. What the evaluation throws, the read
   * throws. A global assigned before or after is simply replaced, as a plain global would be.
   * While a group loads, its globals read as undefined: a polyfill that first looks for its own
   * global finds none, rather than loading itself again.
   *
   * The accessors are made by the returned script, to be evaluated with the preparation's
   * scripts while the global LAZY_LOADER holds the one host function they call (take it after):
   * making a host function for each accessor cost more than an echo bot's whole execution.
   */
  defineLazy(groups: readonly LazyGroup[], host: QuickJSHandle): string {
    const { vm } = this;
    const names: string[] = [];
    const groupOf: number[] = [];
    groups.forEach((group, index) => {
      for (const name of group.globals) {
        names.push(name);
        groupOf.push(index);
      }
    });
    let loading = -1;
    const load = (index: number): void => {
      const { globals, source } = groups[index];
      loading = index;
      try {
        const evaluated = vm.evalCode(source, `${globals[0]}.js`);
        // Thrown from a host function, a handle is thrown in the isolate as it is.
        if (evaluated.error) throw evaluated.error;
        using factory = evaluated.value;
        const made = vm.callFunction(factory, vm.undefined, host);
        if (made.error) throw made.error;
        using values = made.value;
        for (const name of globals) {
          const value = this.read(values, name);
          this.loaded.get(name)?.dispose();
          this.loaded.set(name, value);
        }
      } finally {
        loading = -1;
      }
    };
    using loader = vm.newFunction('load', (position) => {
      const at = vm.getNumber(position);
      const name = names[at];
      if (loading === groupOf[at]) return vm.undefined;
      if (!this.loaded.has(name)) load(groupOf[at]);
      // The caller disposes what a host function returns.
      return this.loaded.get(name)!.dup();
    });
    vm.defineProp(vm.global, LAZY_LOADER, { configurable: true, value: loader });
    // The names as one string: an array literal of them cost twice as much to compile.
    return `((load, define, names) => names.split(',').forEach((name, at) => define(globalThis, name, {
      configurable: true,
      get: () => load(at),
      set: (value) => define(globalThis, name, { value, writable: true, configurable: true }),
    })))(${LAZY_LOADER}, Object.defineProperty, ${JSON.stringify(names.join(','))});`;
  }

  /**
   * A proxy over a frozen empty object whose property reads and `in` tests of string keys are
   * answered by `traps` (symbols read as undefined): an object made so costs nothing to compile,
   * and what it holds can be made on first use. What a trap throws is thrown at the read.
   */
  proxy(traps: { get(key: string): QuickJSHandle; has(key: string): boolean }): QuickJSHandle {
    const { vm } = this;
    const { construct, Proxy: proxyType } = this.originals;
    const keyOf = (key: QuickJSHandle) =>
      vm.typeof(key) === 'string' ? vm.getString(key) : undefined;
    using empty = vm.newObject();
    this.freeze(empty);
    using handler = vm.newObject();
    using getTrap = vm.newFunction('get', (_target, key) => {
      const name = keyOf(key);
      return name === undefined ? vm.undefined : traps.get(name);
    });
    using hasTrap = vm.newFunction('has', (_target, key) => {
      const name = keyOf(key);
      return name !== undefined && traps.has(name) ? vm.true : vm.false;
    });
    vm.setProp(handler, 'get', getTrap);
    vm.setProp(handler, 'has', hasTrap);
    using args = vm.newArray();
    vm.setProp(args, 0, empty);
    vm.setProp(args, 1, handler);
    return this.check(vm.callFunction(construct, vm.undefined, proxyType, args));
  }

  /** `globalThis[name]`, deleted from the global object: what preparation left for the worker. */
  takeGlobal(name: string): QuickJSHandle {
    const { vm } = this;
    const value = vm.getProp(vm.global, name);
    using key = vm.newString(name);
    const { deleteProperty } = this.originals;
    this.check(vm.callFunction(deleteProperty, vm.undefined, vm.global, key)).dispose();
    return value;
  }

  /** `globalThis[name]` if it is a function: read by trusted code, before the bot's runs. */
  globalFunction(name: string): QuickJSHandle | undefined {
    const value = this.vm.getProp(this.vm.global, name);
    if (this.vm.typeof(value) === 'function') return value;
    value.dispose();
    return undefined;
  }

  /** `object[key]` if `object` is an object and that is a string. */
  stringAt(object: QuickJSHandle, key: string): string | undefined {
    if (!this.isObject(object)) return undefined;
    using value = this.read(object, key);
    return this.vm.typeof(value) === 'string' ? this.vm.getString(value) : undefined;
  }

  /** `object[key]` through the original `Reflect.get`: a getter that throws is the bot's error. */
  read(object: QuickJSHandle, key: string): QuickJSHandle {
    using name = this.vm.newString(key);
    return this.check(this.vm.callFunction(this.originals.get, this.vm.undefined, object, name));
  }

  dispose(): void {
    const handles = [
      ...Object.values(this.originals),
      ...Object.values(this.helpers),
      ...this.loaded.values(),
    ];
    for (const handle of handles) handle?.dispose();
    this.loaded.clear();
  }

  private isObject(handle: QuickJSHandle): boolean {
    return this.vm.typeof(handle) === 'object' && !this.vm.sameValue(handle, this.vm.null);
  }

  /** The helper `name`, compiled now (called with `args`) if not yet, called with `values`. */
  private callHelper(
    name: keyof typeof HELPERS,
    args: readonly QuickJSHandle[],
    ...values: QuickJSHandle[]
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
    return vm.callFunction(helper, vm.undefined, ...values);
  }
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
    construct: vm.getProp(reflect, 'construct'),
    Proxy: vm.getProp(vm.global, 'Proxy'),
    deleteProperty: vm.getProp(reflect, 'deleteProperty'),
    freeze: vm.getProp(object, 'freeze'),
    Promise: promise,
    resolve: vm.getProp(promise, 'resolve'),
  };
}

/**
 * DOMException, Event, EventTarget, AbortController and AbortSignal as the DOM Standard defines
 * them, for the isolate (QuickJS has none): what cancellable APIs (fetch, timers' users) and
 * libraries that look for them (Medplum's client) need. Listeners run synchronously, in order;
 * there is no capture or bubbling, as nothing here has a parent.
 */

/** The legacy `code` of the DOMException names that have one. */
const LEGACY_CODES: Record<string, number> = {
  IndexSizeError: 1,
  HierarchyRequestError: 3,
  WrongDocumentError: 4,
  InvalidCharacterError: 5,
  NoModificationAllowedError: 7,
  NotFoundError: 8,
  NotSupportedError: 9,
  InvalidStateError: 11,
  SyntaxError: 12,
  InvalidModificationError: 13,
  NamespaceError: 14,
  InvalidAccessError: 15,
  TypeMismatchError: 17,
  SecurityError: 18,
  NetworkError: 19,
  AbortError: 20,
  URLMismatchError: 21,
  QuotaExceededError: 22,
  TimeoutError: 23,
  InvalidNodeTypeError: 24,
  DataCloneError: 25,
};

export class DOMException extends Error {
  readonly code: number;

  constructor(message = '', name = 'Error') {
    super(message);
    Object.defineProperty(this, 'name', {
      value: String(name),
      configurable: true,
      writable: true,
    });
    this.code = LEGACY_CODES[this.name] ?? 0;
  }
}

export interface EventInit {
  bubbles?: boolean;
  cancelable?: boolean;
  composed?: boolean;
}

export class Event {
  static readonly NONE = 0;
  static readonly CAPTURING_PHASE = 1;
  static readonly AT_TARGET = 2;
  static readonly BUBBLING_PHASE = 3;

  readonly type: string;
  readonly bubbles: boolean;
  readonly cancelable: boolean;
  readonly composed: boolean;
  readonly timeStamp = Date.now();
  readonly isTrusted = false;
  target: EventTarget | null = null;
  currentTarget: EventTarget | null = null;
  eventPhase = Event.NONE;
  defaultPrevented = false;
  /** Set by stopImmediatePropagation: the remaining listeners are skipped. */
  stopped = false;

  constructor(type: string, init: EventInit = {}) {
    if (arguments.length === 0) throw new TypeError('The event type is required');
    this.type = String(type);
    this.bubbles = Boolean(init.bubbles);
    this.cancelable = Boolean(init.cancelable);
    this.composed = Boolean(init.composed);
  }

  preventDefault(): void {
    if (this.cancelable) this.defaultPrevented = true;
  }

  stopPropagation(): void {}

  stopImmediatePropagation(): void {
    this.stopped = true;
  }

  composedPath(): EventTarget[] {
    return this.currentTarget ? [this.currentTarget] : [];
  }
}

type Listener = ((event: Event) => unknown) | { handleEvent(event: Event): unknown };

interface Registration {
  readonly listener: Listener;
  readonly once: boolean;
  removed: boolean;
}

export interface AddEventListenerOptions {
  once?: boolean;
  capture?: boolean;
  passive?: boolean;
  signal?: AbortSignal;
}

export class EventTarget {
  #listeners = new Map<string, Registration[]>();

  addEventListener(
    type: string,
    listener: Listener | null,
    options: AddEventListenerOptions | boolean = {},
  ): void {
    if (listener === null || listener === undefined) return;
    const { once = false, signal } = typeof options === 'object' ? options : {};
    if (signal?.aborted) return;
    const list = this.#listeners.get(type) ?? [];
    if (list.some((registration) => registration.listener === listener)) return;
    const registration: Registration = { listener, once: Boolean(once), removed: false };
    list.push(registration);
    this.#listeners.set(type, list);
    signal?.addEventListener('abort', () => this.removeEventListener(type, listener));
  }

  removeEventListener(type: string, listener: Listener | null): void {
    const list = this.#listeners.get(type);
    const index = list?.findIndex((registration) => registration.listener === listener) ?? -1;
    if (index < 0) return;
    list![index].removed = true;
    list!.splice(index, 1);
  }

  dispatchEvent(event: Event): boolean {
    if (!(event instanceof Event)) throw new TypeError('dispatchEvent needs an Event');
    event.target = event.currentTarget = this;
    event.eventPhase = Event.AT_TARGET;
    const handler = (this as unknown as Record<string, unknown>)[`on${event.type}`];
    const list = [...(this.#listeners.get(event.type) ?? [])];
    if (typeof handler === 'function') handler.call(this, event);
    for (const registration of list) {
      if (event.stopped) break;
      if (registration.removed) continue;
      if (registration.once) this.removeEventListener(event.type, registration.listener);
      const { listener } = registration;
      if (typeof listener === 'function') listener.call(this, event);
      else listener.handleEvent(event);
    }
    event.currentTarget = null;
    event.eventPhase = Event.NONE;
    return !event.defaultPrevented;
  }
}

/** Signals are made only by AbortController and AbortSignal's static methods. */
const MAKING = Symbol('making an AbortSignal');
let makeSignal: () => AbortSignal;
let abortSignal: (signal: AbortSignal, reason: unknown) => void;

export class AbortSignal extends EventTarget {
  #aborted = false;
  #reason: unknown = undefined;
  onabort: ((event: Event) => unknown) | null = null;

  constructor(making?: symbol) {
    super();
    if (making !== MAKING) throw new TypeError('Illegal constructor');
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  throwIfAborted(): void {
    if (this.#aborted) throw this.#reason;
  }

  static abort(reason?: unknown): AbortSignal {
    const signal = new AbortSignal(MAKING);
    signal.#abort(reason);
    return signal;
  }

  /** Aborts with a TimeoutError after `ms`, through the isolate's setTimeout. */
  static timeout(ms: number): AbortSignal {
    const signal = new AbortSignal(MAKING);
    setTimeout(
      () => signal.#abort(new DOMException('The operation timed out.', 'TimeoutError')),
      ms,
    );
    return signal;
  }

  /** Aborts when the first of `signals` does, with its reason. */
  static any(signals: Iterable<AbortSignal>): AbortSignal {
    const signal = new AbortSignal(MAKING);
    const list = [...signals];
    const already = list.find((each) => each.aborted);
    if (already) {
      signal.#abort(already.reason);
      return signal;
    }
    for (const each of list) each.addEventListener('abort', () => signal.#abort(each.reason));
    return signal;
  }

  // What AbortController needs, kept from the bot's view of the class.
  static {
    makeSignal = () => new AbortSignal(MAKING);
    abortSignal = (signal, reason) => signal.#abort(reason);
  }

  #abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason =
      reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    this.dispatchEvent(new Event('abort'));
  }
}

export class AbortController {
  readonly signal = makeSignal();

  abort(reason?: unknown): void {
    abortSignal(this.signal, reason);
  }
}

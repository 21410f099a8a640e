/**
 * What the worker gives the isolate's own code (never the bot's): a lazy group's factory and the
 * `fhir` client get it as an argument.
 */
export interface IsolateHost {
  /**
   * Runs `method` on the main thread (bot-host.ts) with `args` as JSON: the reply's value, or an
   * Error with its message and `outcome` (an OperationOutcome).
   */
  call(method: string, ...args: unknown[]): Promise<unknown>;
  /**
   * One of the worker's synchronous natives, by name (see Natives): a single host function, since
   * making each costs every isolate, used or not.
   */
  native(name: keyof Natives, ...args: unknown[]): unknown;
}

/** The worker's synchronous natives (sandbox-isolate.ts), for the web platform's own code. */
export interface Natives {
  /**
   * A timer (sandbox-timers.ts): `callback` runs when `delay` ms have passed, and again every
   * `delay` ms if `repeat`, until cleared or the handler settles. Its id; a RangeError when too
   * many are pending.
   */
  setTimer(callback: () => void, delay: number, repeat: boolean): number;
  clearTimer(id: number): void;
  /** Random bytes from node:crypto, at most 1,024 a call (a RangeError beyond). */
  randomBytes(length: number): ArrayBuffer;
  randomUUID(): string;
  /** SHA-1, SHA-256, SHA-384 or SHA-512 of `data`. */
  digest(algorithm: string, data: ArrayBuffer): ArrayBuffer;
  /**
   * `input` parsed against `base` by Node's URL, with `property` then set to `value`: the JSON
   * of its parts (href, origin, protocol… hash), or of null when it does not parse.
   */
  url(input: string, base?: string, property?: string, value?: string): string;
  /** A call on Node's Intl, as JSON in and out (sandbox-natives.ts `intl`). */
  intl(requestJson: string): string;
  /**
   * Base64 (as fetch's bodies cross: isolate/fetch.ts) as bytes, and back, by Node: a loop in
   * QuickJS took 200 ms for 640 KB.
   */
  base64ToBytes(base64: string): ArrayBuffer;
  bytesToBase64(data: ArrayBuffer): string;
}

/** The natives as functions, for a lazy group's code. */
export function nativesOf(host: IsolateHost): Natives {
  const native =
    (name: keyof Natives) =>
    (...args: unknown[]) =>
      host.native(name, ...args);
  return {
    setTimer: native('setTimer'),
    clearTimer: native('clearTimer'),
    randomBytes: native('randomBytes'),
    randomUUID: native('randomUUID'),
    digest: native('digest'),
    url: native('url'),
    intl: native('intl'),
    base64ToBytes: native('base64ToBytes'),
    bytesToBase64: native('bytesToBase64'),
  } as Natives;
}

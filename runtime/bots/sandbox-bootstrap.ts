/**
 * JavaScript evaluated inside each fresh QuickJS context, after the preludes and before the
 * bot's code: the glue that touches the bot's own values, which must run as JavaScript inside the
 * isolate. It is a function expression; the isolate calls it with the `fhir` client, an object of
 * host functions (sandbox-isolate.ts), which it freezes. `console` is host functions too, set by
 * the isolate, and what they need in JavaScript (SHOW_SOURCE, REPLY_SOURCE) is compiled on first
 * use: QuickJS compiles about 65 µs per KB of source, and every execution compiles this afresh.
 *
 * It returns `{ cjs, invoke, Error, parse, stringify }`: `cjs(fn)` runs a CommonJS wrapper
 * function and returns its `module.exports`; `invoke(exports, eventJson)` finds the handler, calls
 * it with `(fhir, event)` and resolves to `u` (undefined), `v<json>` (a JSON value) or `h<text>`
 * (an `Hl7Message`, by its `toString()`); the rest are the originals of the isolate's globals.
 * `JSON`, `Error`, `Object.freeze` and `Hl7Message` (or its loader) are captured before the bot's
 * code can replace them.
 * `globalThis.__graphirReviveEvent`, when a prelude defines it, maps the parsed event before the
 * handler sees it (e.g. HL7 text into an `Hl7Message`).
 */
export const SHOWN_CHARS = 4096;

export const BOOTSTRAP_SOURCE = String.raw`(function (fhir) {
  'use strict';
  const G = globalThis;
  const { parse, stringify } = JSON;
  const ErrorType = Error;
  // A prelude may define Hl7Message lazily (compiled on first use) and say through
  // __graphirHl7Loaded whether it was; then only a loaded class can have made the result.
  const hl7Loaded = typeof G.__graphirHl7Loaded === 'function' ? G.__graphirHl7Loaded : undefined;
  const eagerHl7 = hl7Loaded ? undefined : typeof G.Hl7Message === 'function' ? G.Hl7Message : undefined;
  const revive = typeof G.__graphirReviveEvent === 'function' ? G.__graphirReviveEvent : undefined;
  Object.freeze(fhir);

  const require = (name) => {
    throw new ErrorType("Cannot find module '" + name + "': bots cannot load modules");
  };
  const cjs = (wrapper) => {
    const module = { exports: {} };
    wrapper.call(module.exports, module.exports, module, require);
    return module.exports;
  };
  const handlerOf = (exports) => {
    if (typeof exports === 'function') return exports;
    if (exports === null || typeof exports !== 'object') return undefined;
    if (typeof exports.handler === 'function') return exports.handler;
    const fallback = exports.default;
    if (typeof fallback === 'function') return fallback;
    if (fallback && typeof fallback.handler === 'function') return fallback.handler;
    return undefined;
  };
  const invoke = async (exports, eventJson) => {
    const handler = handlerOf(exports);
    if (!handler) {
      throw new ErrorType(
        'The bot exports no handler: use "export async function handler(fhir, event)" or "exports.handler = async (fhir, event) => …"',
      );
    }
    const event = revive ? revive(parse(eventJson)) : parse(eventJson);
    const result = await handler(fhir, event);
    const Hl7 = hl7Loaded ? hl7Loaded() : eagerHl7;
    if (Hl7 && result instanceof Hl7) return 'h' + String(result.toString());
    const json = stringify(result);
    return json === undefined ? 'u' : 'v' + json;
  };
  return { cjs, invoke, Error: ErrorType, parse, stringify };
})`;

/**
 * Compiled in the isolate on first use, with the bootstrap's captured `Error` and `stringify`:
 * a console argument as text, at most SHOWN_CHARS + 1 characters.
 */
export const SHOW_SOURCE = String.raw`(function (ErrorType, stringify) {
  'use strict';
  const text = (value) => {
    if (typeof value === 'string') return value;
    if (value instanceof ErrorType) {
      return String(value) + (value.stack ? '\n' + String(value.stack).trimEnd() : '');
    }
    if (typeof value === 'object' && value !== null) return stringify(value) ?? String(value);
    return String(value);
  };
  return (value) => {
    try {
      const shown = text(value);
      return shown.length > ${SHOWN_CHARS} ? shown.slice(0, ${SHOWN_CHARS + 1}) : shown;
    } catch {
      return '[unprintable]';
    }
  };
})`;

/**
 * Compiled in the isolate on first use, with the bootstrap's captured `Error` and `parse`: a host
 * reply (`{ok, value}` or `{ok: false, message, outcome}`) as its value, or an Error with its
 * message and OperationOutcome, thrown.
 */
export const REPLY_SOURCE = String.raw`(function (ErrorType, parse) {
  'use strict';
  return (replyJson) => {
    const { ok, value, message, outcome } = parse(replyJson);
    if (ok) return value;
    const error = new ErrorType(message);
    if (outcome !== undefined) error.outcome = outcome;
    throw error;
  };
})`;

/** `export …` or a static `import` at the start of a line: the code is an ES module. */
const MODULE_SYNTAX = /^[ \t]*(?:export[\s{*]|import(?:\s+[\w$*{'"]|\s*[{*'"]))/m;

export function looksLikeModule(code: string): boolean {
  return MODULE_SYNTAX.test(code);
}

/** CommonJS code runs as the body of this function, like Node's module wrapper. */
export function commonJsWrapper(code: string): string {
  return `(function (exports, module, require) {${code}\n})`;
}

/**
 * JavaScript evaluated inside each fresh QuickJS context, after the preludes and before the
 * bot's code. It is a function expression; the isolate calls it with two host functions that
 * only take and return strings:
 *
 * - `hostCall(method, argsJson)` → a promise of the reply JSON (`{ok, value}` or
 *   `{ok: false, message, outcome}`);
 * - `writeLog(line)` → appends one console line.
 *
 * It installs `console`, builds the `fhir` client and returns `{ cjs, invoke }`: `cjs(fn)` runs a
 * CommonJS wrapper function and returns its `module.exports`; `invoke(exports, eventJson)` finds
 * the handler, calls it with `(fhir, event)` and resolves to `u` (undefined), `v<json>` (a JSON
 * value) or `h<text>` (an `Hl7Message`, by its `toString()`). The host functions are never
 * reachable from globals, and `JSON`, `Error` and `Hl7Message` (or its loader) are captured before the bot's code
 * can replace them. `globalThis.__graphirReviveEvent`, when a prelude defines it, maps the parsed
 * event before the handler sees it (e.g. HL7 text into an `Hl7Message`).
 */
export const BOOTSTRAP_SOURCE = String.raw`(function (hostCall, writeLog) {
  'use strict';
  const G = globalThis;
  const { parse, stringify } = JSON;
  const ErrorType = Error;
  // A prelude may define Hl7Message lazily (compiled on first use) and say through
  // __graphirHl7Loaded whether it was; then only a loaded class can have made the result.
  const hl7Loaded = typeof G.__graphirHl7Loaded === 'function' ? G.__graphirHl7Loaded : undefined;
  const eagerHl7 = hl7Loaded ? undefined : typeof G.Hl7Message === 'function' ? G.Hl7Message : undefined;
  const revive = typeof G.__graphirReviveEvent === 'function' ? G.__graphirReviveEvent : undefined;
  const MAX_LINE = 4096;

  const show = (value) => {
    try {
      if (typeof value === 'string') return value;
      if (value instanceof ErrorType) {
        return String(value) + (value.stack ? '\n' + String(value.stack).trimEnd() : '');
      }
      if (typeof value === 'object' && value !== null) return stringify(value) ?? String(value);
      return String(value);
    } catch {
      return '[unprintable]';
    }
  };
  const logger = (prefix) => (...args) => {
    const line = prefix + args.map(show).join(' ');
    writeLog(line.length > MAX_LINE ? line.slice(0, MAX_LINE) + '… (truncated)' : line);
  };
  G.console = {
    log: logger(''),
    info: logger(''),
    debug: logger(''),
    warn: logger('WARN '),
    error: logger('ERROR '),
  };

  const method = (name) => async (...args) => {
    const reply = parse(await hostCall(name, stringify(args)));
    if (reply.ok) return reply.value;
    const error = new ErrorType(reply.message);
    if (reply.outcome !== undefined) error.outcome = reply.outcome;
    throw error;
  };
  const fhir = Object.freeze({
    readResource: method('readResource'),
    searchResources: method('searchResources'),
    searchOne: method('searchOne'),
    createResource: method('createResource'),
    updateResource: method('updateResource'),
    deleteResource: method('deleteResource'),
    graphql: method('graphql'),
  });

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
  return { cjs, invoke };
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

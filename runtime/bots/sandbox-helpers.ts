/**
 * The little JavaScript that runs inside each QuickJS isolate as JavaScript: what must touch the
 * bot's own values with the language's semantics (`instanceof`, `toJSON`, thrown values). The
 * rest of the glue between the isolate and the worker (finding the handler, parsing the event,
 * freezing the `fhir` client) is host calls on values captured before the bot's code runs
 * (sandbox-glue.ts): every isolate would compile the source afresh, at a cost that grows with
 * its length. Each helper here is compiled on first use, in the isolates that need it.
 */
export const SHOWN_CHARS = 4096;

/**
 * Called with the isolate's original `Error` and `JSON.stringify`: a console argument as text,
 * at most SHOWN_CHARS + 1 characters.
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
 * Called with the isolate's original `Error` and `JSON.parse`: a host reply (`{ok, value}` or
 * `{ok: false, message, outcome}`) as its value, or an Error with its message and
 * OperationOutcome, thrown.
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

/**
 * Called with a result and the isolate's `Hl7Message` class, or undefined when answering an HL7
 * request: then a message of any copy of the class counts, such as @medplum/core's bundled into
 * the bot, known by the shape Medplum's class has (its segments, `getSegment`, its own
 * `toString`). The result's `toString()` as text if it is a message, else undefined.
 */
export const HL7_TEXT_SOURCE = String.raw`(function () {
  'use strict';
  const objectToString = Object.prototype.toString;
  const isMessage = (value, Hl7Message) =>
    Hl7Message === undefined
      ? Array.isArray(value.segments) &&
        typeof value.getSegment === 'function' &&
        typeof value.toString === 'function' &&
        value.toString !== objectToString
      : value instanceof Hl7Message;
  return (value, Hl7Message) =>
    isMessage(value, Hl7Message) ? String(value.toString()) : undefined;
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

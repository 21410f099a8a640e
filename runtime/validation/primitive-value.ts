/**
 * Checks one primitive JSON value against its PrimitiveDefinition
 * (http://hl7.org/fhir/R4/json.html#primitive, http://hl7.org/fhir/R4/datatypes.html#primitive).
 */
import type { PrimitiveDefinition } from '../model/type-definition.js';
import { describe, quote, report, type ValidationContext } from './validation-context.js';

const patternCache = new Map<string, RegExp>();

/** HL7's unanchored regex, anchored and compiled once per distinct pattern. */
export function compilePattern(pattern: string): RegExp {
  let regex = patternCache.get(pattern);
  if (regex === undefined) {
    regex = new RegExp(`^(?:${xsdWhitespace(pattern)})$`);
    patternCache.set(pattern, regex);
  }
  return regex;
}

/**
 * HL7's patterns are XML Schema regexes, where `\s` is only space, tab, CR and LF. JavaScript's
 * `\s` also takes U+00A0, U+3000, U+2028, U+FEFF and more, so string's `[ \r\n\t\S]+` refused
 * "Yama\u3000da" (an ideographic space); here `\s` and `\S` mean what the spec means.
 * @see https://www.w3.org/TR/xmlschema-2/#charcter-classes
 */
function xsdWhitespace(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[++i];
      if (next === 's') out += inClass ? XSD_SPACE : `[${XSD_SPACE}]`;
      else if (next === 'S') out += inClass ? XSD_NOT_SPACE : `[${XSD_NOT_SPACE}]`;
      else out += c + next;
    } else {
      if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      out += c;
    }
  }
  return out;
}

const XSD_SPACE = ' \\t\\n\\r';
/** Every UTF-16 unit but those four (patterns compile without the `u` flag). */
const XSD_NOT_SPACE = '\\0-\\x08\\x0B\\x0C\\x0E-\\x1F\\x21-\\uFFFF';

/**
 * Linear-time equivalent of HL7's base64Binary regex `(\s*([0-9a-zA-Z\+/=]){4}\s*)+`, whose
 * nested `\s*` backtracks exponentially on inputs such as `"AAAA  ".repeat(20) + "!"`.
 * Both accept exactly: one or more whitespace-separated runs of base64 characters, each run's
 * length a multiple of 4.
 */
export function isBase64Binary(text: string): boolean {
  const runs = text.split(/\s+/).filter((run) => run !== '');
  return runs.length > 0 && runs.every((run) => run.length % 4 === 0 && BASE64_RUN.test(run));
}

const BASE64_RUN = /^[0-9a-zA-Z+/=]+$/;

/** Primitives whose HL7 regex is replaced by an equivalent, backtracking-free check. */
const SAFE_MATCHERS: Readonly<Record<string, (text: string) => boolean>> = {
  base64Binary: isBase64Binary,
};

function matches(def: PrimitiveDefinition, text: string): boolean {
  const safe = Object.hasOwn(SAFE_MATCHERS, def.name) ? SAFE_MATCHERS[def.name] : undefined;
  if (safe !== undefined) return safe(text);
  return def.pattern === undefined || compilePattern(def.pattern).test(text);
}

/** FHIR integers are 32-bit (http://hl7.org/fhir/R4/datatypes.html#integer). */
const INTEGER_TYPES = new Set(['integer', 'positiveInt', 'unsignedInt']);
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export function checkPrimitive(
  ctx: ValidationContext,
  def: PrimitiveDefinition,
  value: unknown,
  path: string,
): void {
  if (typeof value !== def.jsonType) {
    const fhirType = def.name === def.jsonType ? '' : ` (FHIR type ${def.name})`;
    const diagnostics = `${path}: expected a JSON ${def.jsonType}${fhirType}, got ${describe(value)}`;
    report(ctx, 'value', path, diagnostics);
    return;
  }
  if (typeof value === 'string') checkString(ctx, def, value, path);
  else if (typeof value === 'number') checkNumber(ctx, def, value, path);
}

/**
 * U+0000 and unpaired surrogates: not Unicode text (FHIR strings are; the spec forbids every
 * control character but tab, CR and LF), and PostgreSQL cannot store them.
 * @see http://hl7.org/fhir/R4/datatypes.html#string
 */
const UNSTORABLE = /\u0000|\p{Cs}/u;

function checkString(
  ctx: ValidationContext,
  def: PrimitiveDefinition,
  value: string,
  path: string,
): void {
  if (value === '') {
    report(ctx, 'value', path, `${path} must not be an empty string (omit the element instead)`);
  } else if (UNSTORABLE.test(value)) {
    report(ctx, 'value', path, `${path}: ${quote(value)} holds U+0000 or an unpaired surrogate`);
  } else if (!matches(def, value)) {
    report(ctx, 'value', path, `${path}: ${quote(value)} is not a valid ${def.name}`);
  }
}

function checkNumber(
  ctx: ValidationContext,
  def: PrimitiveDefinition,
  value: number,
  path: string,
): void {
  if (INTEGER_TYPES.has(def.name) && !isInt32(value)) {
    const range = `a whole number from ${INT32_MIN} to ${INT32_MAX}`;
    report(ctx, 'value', path, `${path}: ${value} is not a valid ${def.name} (expected ${range})`);
  } else if (!Number.isFinite(value) || !matches(def, String(value))) {
    report(ctx, 'value', path, `${path}: ${value} is not a valid ${def.name}`);
  }
}

function isInt32(value: number): boolean {
  return Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX;
}

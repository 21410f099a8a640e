/**
 * Parsers for the values of FHIR R4 search parameters, by parameter type. What a value means for
 * matching (modifiers, string normalisation, comparisons) is decided elsewhere; this module only
 * turns the text the client wrote into a typed value, or says precisely what is wrong with it.
 *
 * @see http://hl7.org/fhir/R4/search.html
 */
import { parseDateRange, type DateRange } from './parse-date-value.js';
import { parseDecimal } from './parse-number-value.js';
import { FhirError } from '../model/fhir-error.js';
import type { SearchType } from '../model/search-definition.js';

/** @see http://hl7.org/fhir/R4/search.html#prefix */
export type SearchPrefix = 'eq' | 'ne' | 'gt' | 'lt' | 'ge' | 'le' | 'sa' | 'eb' | 'ap';

export interface StringSearchValue {
  type: 'string';
  value: string;
}

export interface UriSearchValue {
  type: 'uri';
  value: string;
}

/** system undefined = any system; system '' = explicitly no system (`|code`); code undefined = `system|` (any code in system). */
export interface TokenSearchValue {
  type: 'token';
  system?: string;
  code?: string;
}

/**
 * `Patient/123`, `123` (id only), `http://x/fhir/Patient/123` (absolute url: keep url, and also
 * resourceType/id when the url ends in Type/id), `Patient/123/_history/2` (version). For a
 * canonical `url|version`, version is the canonical's version.
 */
export interface ReferenceSearchValue {
  type: 'reference';
  resourceType?: string;
  id?: string;
  version?: string;
  url?: string;
}

export interface DateSearchValue extends DateRange {
  type: 'date';
  prefix: SearchPrefix;
}

/** low/high: the implicit range from the significant figures (100 → [99.5, 100.5); 1e2 → [50, 150)), used by eq/ne/ap. */
export interface NumberSearchValue {
  type: 'number';
  prefix: SearchPrefix;
  value: number;
  low: number;
  high: number;
}

/** system and code are absent when the client left them empty: then any system or unit matches. */
export interface QuantitySearchValue {
  type: 'quantity';
  prefix: SearchPrefix;
  value: number;
  low: number;
  high: number;
  system?: string;
  code?: string;
}

/** Components are split on unescaped `$` and keep their escapes, to be parsed by their own types. */
export interface CompositeSearchValue {
  type: 'composite';
  components: string[];
}

/** Kept exactly as written (escapes included): each special parameter has its own grammar. */
export interface SpecialSearchValue {
  type: 'special';
  value: string;
}

export type SearchValue =
  | StringSearchValue
  | UriSearchValue
  | TokenSearchValue
  | ReferenceSearchValue
  | DateSearchValue
  | NumberSearchValue
  | QuantitySearchValue
  | CompositeSearchValue
  | SpecialSearchValue;

/** A value the client got wrong; `message` starts with the argument's name and says what is expected. */
export class SearchValueError extends FhirError {
  constructor(
    /** The argument as the client wrote it: `birthdate`, `name_exact`. */
    readonly argument: string,
    problem: string,
  ) {
    super(400, [
      {
        severity: 'error',
        code: 'invalid',
        diagnostics: `${argument}: ${problem}`,
        expression: [argument],
      },
    ]);
  }
}

/**
 * One value (no unescaped commas). `argument` is the parameter name as the client wrote it (used
 * in messages). Escapes are honoured as in parseSearchValues; special values are kept verbatim.
 */
export function parseSearchValue(type: SearchType, raw: string, argument: string): SearchValue {
  if (raw === '') throw new SearchValueError(argument, `the value is empty (expected a ${type})`);
  if (type === 'special') return { type, value: raw };
  checkEscapes(raw, argument);
  switch (type) {
    case 'string':
      return { type, value: unescape(raw) };
    case 'uri':
      return { type, value: unescape(raw) };
    case 'token':
      return parseToken(raw, argument);
    case 'reference':
      return parseReference(raw, argument);
    case 'date':
      return parseDate(raw, argument);
    case 'number':
      return parseNumber(raw, argument);
    case 'quantity':
      return parseQuantity(raw, argument);
    case 'composite':
      return parseComposite(raw, argument);
  }
}

/**
 * A parameter's whole value: comma-separated alternatives (OR), honouring the escapes
 * `\,` `\$` `\|` `\\` (escaped characters are literal in the result).
 * @see http://hl7.org/fhir/R4/search.html#escaping
 */
export function parseSearchValues(type: SearchType, raw: string, argument: string): SearchValue[] {
  if (raw === '') throw new SearchValueError(argument, `the value is empty (expected a ${type})`);
  return splitUnescaped(raw, ',').map((alternative, index) => {
    if (alternative !== '') return parseSearchValue(type, alternative, argument);
    throw new SearchValueError(
      argument,
      `alternative ${index + 1} of ${quote(raw)} is empty (write \\, for a literal comma)`,
    );
  });
}

// --- Escapes ---

/**
 * Splits on `separator` where it is not escaped, keeping escape sequences in the parts so that a
 * later split (`,` then `|` or `$`) still sees them.
 */
function splitUnescaped(text: string, separator: ',' | '|' | '$'): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    if (text[i] === separator) {
      parts.push(current);
      current = '';
    } else {
      current += text[i] === '\\' ? text[i] + (text[++i] ?? '') : text[i];
    }
  }
  return [...parts, current];
}

/** The spec makes any other use of `\` illegal (`xx\xx`), so say so rather than guess. */
function checkEscapes(raw: string, argument: string): void {
  for (const [sequence] of raw.matchAll(/\\[\s\S]?/g)) {
    if (!/^\\[,$|\\]$/.test(sequence)) {
      const problem = 'does not escape "," "$" "|" or "\\" (write \\\\ for a literal backslash)';
      throw fail(argument, raw, `has a "\\" that ${problem}`);
    }
  }
}

function unescape(text: string): string {
  return text.replace(/\\([,$|\\])/g, '$1');
}

// --- Prefixes ---

const PREFIXES: readonly string[] = ['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb', 'ap'];

/**
 * A prefix is two lowercase letters right before the value. Number, date and quantity values
 * never start with a letter, so any two leading letters are a prefix attempt.
 * @see http://hl7.org/fhir/R4/search.html#prefix
 */
function splitPrefix(raw: string, kind: string, argument: string) {
  const letters = /^[A-Za-z]{2}/.exec(raw)?.[0];
  if (letters === undefined) return { prefix: 'eq' as SearchPrefix, text: raw };
  if (!PREFIXES.includes(letters)) {
    const expected = `one of ${PREFIXES.join(', ')}, in lowercase, right before the value`;
    throw invalid(argument, raw, kind, `"${letters}" is not a search prefix`, expected);
  }
  if (raw.length === 2) {
    throw fail(argument, raw, `has the prefix ${letters} but no value after it`);
  }
  return { prefix: letters as SearchPrefix, text: raw.slice(2) };
}

// --- Ordered types: date, number, quantity ---

const DATE_EXPECTED =
  'YYYY, YYYY-MM, YYYY-MM-DD or a dateTime, optionally after a prefix such as ge';
const NUMBER_EXPECTED = 'a decimal such as 100, -3.5 or 1e2, optionally after a prefix such as ge';
const QUANTITY_EXPECTED =
  '[prefix]number, [prefix]number|system|code or [prefix]number||code, e.g. le5.4|http://unitsofmeasure.org|mg';

/** @see http://hl7.org/fhir/R4/search.html#date */
function parseDate(raw: string, argument: string): DateSearchValue {
  const { prefix, text } = splitPrefix(raw, 'date', argument);
  const range = parseDateRange(text);
  if (typeof range === 'string') throw invalid(argument, raw, 'date', range, DATE_EXPECTED);
  return { type: 'date', prefix, ...range };
}

/** @see http://hl7.org/fhir/R4/search.html#number */
function parseNumber(raw: string, argument: string): NumberSearchValue {
  const { prefix, text } = splitPrefix(raw, 'number', argument);
  const decimal = parseDecimal(text);
  if (typeof decimal === 'string') throw invalid(argument, raw, 'number', decimal, NUMBER_EXPECTED);
  return { type: 'number', prefix, ...decimal };
}

/**
 * `[prefix]number|system|code`, `[prefix]number||code` or `[prefix]number`. An empty system or
 * code is left out: the spec reads `5.4||mg` as "mg in any system".
 * @see http://hl7.org/fhir/R4/search.html#quantity
 */
function parseQuantity(raw: string, argument: string): QuantitySearchValue {
  const { prefix, text } = splitPrefix(raw, 'quantity', argument);
  const parts = splitUnescaped(text, '|').map(unescape);
  if (parts.length !== 1 && parts.length !== 3) {
    const problem = `it has ${parts.length - 1} unescaped "|" where 0 or 2 belong`;
    throw invalid(argument, raw, 'quantity', problem, QUANTITY_EXPECTED);
  }
  const [number, system, code] = parts;
  const decimal = parseDecimal(number);
  if (typeof decimal === 'string') {
    const problem = `${quote(number)} is ${decimal}`;
    throw invalid(argument, raw, 'quantity', problem, QUANTITY_EXPECTED);
  }
  return { type: 'quantity', prefix, ...decimal, ...(system && { system }), ...(code && { code }) };
}

// --- Structured types: token, reference, composite ---

/** @see http://hl7.org/fhir/R4/search.html#token */
function parseToken(raw: string, argument: string): TokenSearchValue {
  const parts = splitUnescaped(raw, '|').map(unescape);
  if (parts.length === 1) return { type: 'token', code: parts[0] };
  const expected = '(expected code, system|code, |code or system|; write \\| for a literal "|")';
  if (parts.length > 2) {
    throw fail(argument, raw, `has more than one unescaped "|" ${expected}`);
  }
  const [system, code] = parts;
  if (system === '' && code === '') {
    throw fail(argument, raw, `names neither a system nor a code ${expected}`);
  }
  return code === '' ? { type: 'token', system } : { type: 'token', system, code };
}

const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const ID = '[A-Za-z0-9\\-.]{1,64}';
/** `Type/id` or `Type/id/_history/version`: a whole relative reference, or an absolute URL's tail. */
const TYPED = `([A-Z][A-Za-z]*)/(${ID})(?:/_history/(${ID}))?$`;
const RELATIVE = new RegExp(`^${TYPED}`);
const URL_TAIL = new RegExp(`/${TYPED}`);
const ID_ONLY = new RegExp(`^${ID}$`);
const REFERENCE_EXPECTED =
  '(expected id, Type/id, Type/id/_history/version, an absolute URL, or a canonical URL|version)';

/** @see http://hl7.org/fhir/R4/search.html#reference */
function parseReference(raw: string, argument: string): ReferenceSearchValue {
  const [target, canonicalVersion, ...rest] = splitUnescaped(raw, '|').map(unescape);
  const isUrl = ABSOLUTE.test(target);
  // `url|version` is how a canonical reference names a version; a relative reference has none.
  if (rest.length > 0 || (canonicalVersion !== undefined && (!isUrl || canonicalVersion === ''))) {
    throw fail(argument, raw, `is not a valid reference ${REFERENCE_EXPECTED}`);
  }
  if (isUrl) return parseAbsoluteReference(target, canonicalVersion, raw, argument);
  const relative = RELATIVE.exec(target);
  if (relative) return typedReference(relative);
  if (ID_ONLY.test(target)) return { type: 'reference', id: target };
  throw fail(argument, raw, `is not a valid reference ${REFERENCE_EXPECTED}`);
}

function parseAbsoluteReference(
  url: string,
  canonicalVersion: string | undefined,
  raw: string,
  argument: string,
): ReferenceSearchValue {
  if (!URL.canParse(url)) {
    throw fail(argument, raw, `is not a valid reference: ${quote(url)} is not a URL`);
  }
  const tail = URL_TAIL.exec(url);
  const parts = tail ? typedReference(tail) : { type: 'reference' as const };
  if (canonicalVersion === undefined) return { ...parts, url };
  if (parts.version !== undefined) {
    const problem = 'it has both a _history version and a canonical |version';
    throw fail(argument, raw, `is not a valid reference: ${problem}`);
  }
  return { ...parts, version: canonicalVersion, url };
}

function typedReference([, resourceType, id, version]: RegExpExecArray): ReferenceSearchValue {
  return { type: 'reference', resourceType, id, ...(version !== undefined && { version }) };
}

/** @see http://hl7.org/fhir/R4/search.html#composite */
function parseComposite(raw: string, argument: string): CompositeSearchValue {
  const components = splitUnescaped(raw, '$');
  if (components.length < 2 || components.includes('')) {
    const expected = 'two or more non-empty values joined by "$"; write \\$ for a literal "$"';
    throw fail(argument, raw, `is not a valid composite (expected ${expected})`);
  }
  return { type: 'composite', components };
}

// --- Messages ---

/** Every message quotes the value as the client wrote it, then says what is wrong with it. */
function fail(argument: string, raw: string, problem: string): SearchValueError {
  return new SearchValueError(argument, `${quote(raw)} ${problem}`);
}

function invalid(argument: string, raw: string, kind: string, problem: string, expected: string) {
  return fail(argument, raw, `is not a valid ${kind}: ${problem} (expected ${expected})`);
}

/** Quoted as written (JSON.stringify would double every backslash); control characters escaped. */
function quote(text: string): string {
  const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  return `"${text.replace(/[\u0000-\u001f\u007f]/g, escape)}"`;
}

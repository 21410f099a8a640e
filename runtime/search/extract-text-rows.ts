/**
 * Index rows of string, token and uri parameters from one typed value. A value of a type the
 * parameter type does not index, or of an unexpected shape, adds nothing.
 *
 * @see http://hl7.org/fhir/R4/search.html#string
 * @see http://hl7.org/fhir/R4/search.html#token
 * @see http://hl7.org/fhir/R4/search.html#uri
 */
import { isObject } from './extract-reference.js';
import {
  normalizeSearchText,
  type StringIndexRow,
  type TokenIndexRow,
  type UriIndexRow,
} from './search-index.js';

const STRING_TYPES = new Set(['string', 'markdown']);
/** Primitive types whose value is itself the code: `{system: null, value}`. */
const CODE_TYPES = new Set(['code', 'string', 'id', 'uri', 'url', 'canonical', 'oid', 'uuid']);
const URI_TYPES = new Set(['uri', 'url', 'canonical', 'oid', 'uuid']);
const HUMAN_NAME_PARTS = ['family', 'given', 'prefix', 'suffix', 'text'];
const ADDRESS_PARTS = ['line', 'city', 'district', 'state', 'postalCode', 'country', 'text'];

export function addStringRows(
  code: string,
  value: unknown,
  type: string,
  out: StringIndexRow[],
): void {
  const add = (text: unknown) => {
    if (typeof text === 'string') out.push({ code, value: normalize(text), exact: text });
  };
  if (STRING_TYPES.has(type)) add(value);
  else if (type === 'HumanName') addParts(value, HUMAN_NAME_PARTS, add);
  else if (type === 'Address') addParts(value, ADDRESS_PARTS, add);
}

/** Each named property of a complex value, one call per string (arrays flattened). */
function addParts(value: unknown, parts: readonly string[], add: (text: unknown) => void): void {
  if (!isObject(value)) return;
  for (const part of parts) {
    const text = value[part];
    if (Array.isArray(text)) text.forEach(add);
    else add(text);
  }
}

export function addTokenRows(
  code: string,
  value: unknown,
  type: string,
  out: TokenIndexRow[],
): void {
  if (CODE_TYPES.has(type)) {
    if (typeof value === 'string') out.push({ code, system: null, value, text: null });
  } else if (type === 'boolean') {
    if (typeof value === 'boolean') {
      out.push({ code, system: null, value: String(value), text: null });
    }
  } else if (isObject(value)) {
    addComplexTokenRows(code, value, type, out);
  }
}

function addComplexTokenRows(
  code: string,
  value: Record<string, unknown>,
  type: string,
  out: TokenIndexRow[],
): void {
  switch (type) {
    case 'Coding':
      return addCoding(code, value, undefined, out);
    case 'CodeableConcept':
      return addCodeableConcept(code, value, out);
    case 'Identifier': {
      const system = stringOrNull(value.system);
      const identifier = stringOrNull(value.value);
      const text = isObject(value.type) ? textOrNull(value.type.text) : null;
      if (system !== null || identifier !== null) {
        out.push({ code, system, value: identifier, text });
      }
      return;
    }
    case 'ContactPoint':
      if (typeof value.value === 'string') {
        out.push({ code, system: null, value: value.value, text: null });
      }
      return;
  }
}

function addCodeableConcept(
  code: string,
  concept: Record<string, unknown>,
  out: TokenIndexRow[],
): void {
  const text = typeof concept.text === 'string' ? concept.text : undefined;
  if (Array.isArray(concept.coding)) {
    for (const coding of concept.coding) {
      if (isObject(coding)) addCoding(code, coding, text, out);
    }
  }
  if (text !== undefined) out.push({ code, system: null, value: null, text: normalize(text) });
}

/**
 * text is the display, else the concept's text. A coding without code still serves `:text`
 * when it has a display of its own.
 */
function addCoding(
  code: string,
  coding: Record<string, unknown>,
  conceptText: string | undefined,
  out: TokenIndexRow[],
): void {
  const value = stringOrNull(coding.code);
  const text = textOrNull(typeof coding.display === 'string' ? coding.display : conceptText);
  const system = stringOrNull(coding.system);
  if (value !== null || typeof coding.display === 'string') out.push({ code, system, value, text });
}

export function addUriRows(code: string, value: unknown, type: string, out: UriIndexRow[]): void {
  if (URI_TYPES.has(type) && typeof value === 'string') out.push({ code, value });
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function textOrNull(value: unknown): string | null {
  return typeof value === 'string' ? normalize(value) : null;
}

const NON_ASCII = /[^\x00-\x7f]/;

/** normalizeSearchText, skipping Unicode normalization for ASCII text, which it leaves as is. */
function normalize(text: string): string {
  return NON_ASCII.test(text) ? normalizeSearchText(text) : text.toLowerCase();
}

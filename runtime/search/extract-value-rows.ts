/**
 * Index rows of reference, date, number and quantity parameters from one typed value. A value
 * of a type the parameter type does not index, or of an unexpected shape, adds nothing.
 *
 * @see http://hl7.org/fhir/R4/search.html#reference
 * @see http://hl7.org/fhir/R4/search.html#date
 * @see http://hl7.org/fhir/R4/search.html#number
 * @see http://hl7.org/fhir/R4/search.html#quantity
 */
import { parseDateRange } from './parse-date-value.js';
import { isObject, parseReference } from './extract-reference.js';
import type {
  DateIndexRow,
  NumberIndexRow,
  QuantityIndexRow,
  ReferenceIndexRow,
} from './search-index.js';

const CANONICAL_TYPES = new Set(['canonical', 'uri', 'url', 'oid', 'uuid']);
const DATE_TYPES = new Set(['date', 'dateTime', 'instant']);
const NUMBER_TYPES = new Set(['integer', 'decimal', 'positiveInt', 'unsignedInt']);
/** Quantity and its profiles, as datatypes of their own in R4. */
const QUANTITY_TYPES = new Set([
  'Quantity',
  'SimpleQuantity',
  'MoneyQuantity',
  'Age',
  'Count',
  'Distance',
  'Duration',
]);
const CURRENCY_SYSTEM = 'urn:iso:std:iso:4217';

export function addReferenceRows(
  code: string,
  value: unknown,
  type: string,
  out: ReferenceIndexRow[],
): void {
  if (type === 'Reference') {
    // A Reference with only an identifier or a display points nowhere we can match.
    if (isObject(value) && typeof value.reference === 'string') {
      out.push({ code, ...parseReference(value.reference) });
    }
  } else if (CANONICAL_TYPES.has(type) && typeof value === 'string') {
    out.push({ code, targetType: null, targetId: null, url: value });
  }
}

export function addDateRows(code: string, value: unknown, type: string, out: DateIndexRow[]): void {
  if (DATE_TYPES.has(type)) {
    const range = typeof value === 'string' ? dateRange(value) : undefined;
    if (range) out.push({ code, start: range.start, end: range.end });
  } else if (type === 'Period') {
    addPeriod(code, value, out);
  } else if (type === 'Timing' && isObject(value)) {
    if (Array.isArray(value.event)) {
      for (const event of value.event) addDateRows(code, event, 'dateTime', out);
    }
    if (isObject(value.repeat)) addPeriod(code, value.repeat.boundsPeriod, out);
  }
}

/** [start of start, end of end); a missing side is unbounded, an unreadable one drops it. */
function addPeriod(code: string, period: unknown, out: DateIndexRow[]): void {
  if (!isObject(period)) return;
  const start = period.start === undefined ? null : dateRange(period.start);
  const end = period.end === undefined ? null : dateRange(period.end);
  if (start === undefined || end === undefined || (start === null && end === null)) return;
  out.push({ code, start: start?.start ?? null, end: end?.end ?? null });
}

function dateRange(value: unknown): { start: string; end: string } | undefined {
  if (typeof value !== 'string') return undefined;
  const range = parseDateRange(value);
  return typeof range === 'string' ? undefined : range;
}

export function addNumberRows(
  code: string,
  value: unknown,
  type: string,
  out: NumberIndexRow[],
): void {
  if (NUMBER_TYPES.has(type) && typeof value === 'number' && Number.isFinite(value)) {
    out.push({ code, value });
  }
}

export function addQuantityRows(
  code: string,
  value: unknown,
  type: string,
  out: QuantityIndexRow[],
): void {
  if (!isObject(value)) return;
  if (QUANTITY_TYPES.has(type)) {
    addQuantity(code, value, out);
  } else if (type === 'Money') {
    if (isFiniteNumber(value.value)) {
      const unit = typeof value.currency === 'string' ? value.currency : null;
      out.push({ code, value: value.value, system: CURRENCY_SYSTEM, unit });
    }
  } else if (type === 'Range') {
    addQuantity(code, value.low, out);
    addQuantity(code, value.high, out);
  }
}

/** unit is the coded unit when there is one, else the human-readable unit. */
function addQuantity(code: string, quantity: unknown, out: QuantityIndexRow[]): void {
  if (!isObject(quantity) || !isFiniteNumber(quantity.value)) return;
  const system = typeof quantity.system === 'string' ? quantity.system : null;
  const unit =
    typeof quantity.code === 'string'
      ? quantity.code
      : typeof quantity.unit === 'string'
        ? quantity.unit
        : null;
  out.push({ code, value: quantity.value, system, unit });
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

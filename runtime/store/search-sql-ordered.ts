/**
 * Conditions for the ordered search types, date, number and quantity: one value with its prefix
 * against one index row `i` (or, for `_lastUpdated`, the resource row `r`).
 * @see http://hl7.org/fhir/R4/search.html#prefix
 */
import type {
  DateSearchValue,
  NumberSearchValue,
  QuantitySearchValue,
} from '../search/search-value.js';
import { allOf, type SqlParams } from './search-sql-params.js';

/** SQL expressions for a resource's range [start, end), both never null. */
export interface SqlRange {
  readonly start: string;
  readonly end: string;
}

/** A search_date row; a missing bound is unbounded (a Period without start or end). */
export const INDEXED_DATE_RANGE: SqlRange = {
  start: `coalesce(i.start_at, '-infinity'::timestamptz)`,
  end: `coalesce(i.end_at, 'infinity'::timestamptz)`,
};

/** `_lastUpdated`: the instant of the current version, as the range [t, t + 1 ms). */
export const LAST_UPDATED_RANGE: SqlRange = {
  start: 'r.last_updated',
  end: `(r.last_updated + interval '1 millisecond')`,
};

const DAY = 86_400_000;
/** 0001-01-01 and 10000-01-01 UTC: the instants PostgreSQL reads in ISO form without a sign. */
const FIRST_INSTANT = -62_135_596_800_000;
const AFTER_LAST_INSTANT = 253_402_300_800_000;

/**
 * The search range [s, e) against the resource range [rs, re), following the spec's definitions
 * for ranges word for word (eq: the search range contains the resource range; gt: the range above
 * the search value overlaps the resource range; …). `now` decides how far `ap` reaches.
 */
export function dateCondition(
  params: SqlParams,
  value: DateSearchValue,
  target: SqlRange,
  now: number = Date.now(),
): string {
  const [startMs, endMs] = [Date.parse(value.start), Date.parse(value.end)];
  if (value.prefix === 'ap') return approximateDate(params, startMs, endMs, target, now);
  // Only the bounds a prefix uses become parameters: PostgreSQL rejects unreferenced ones.
  const s = once(() => params.add(instant(startMs), 'timestamptz'));
  const e = once(() => params.add(instant(endMs), 'timestamptz'));
  const { start: rs, end: re } = target;
  const contained = () => `${rs} >= ${s()} AND ${re} <= ${e()}`;
  switch (value.prefix) {
    case 'eq':
      return contained();
    case 'ne':
      return `NOT (${contained()})`;
    case 'gt':
      return `${re} > ${e()}`;
    case 'lt':
      return `${rs} < ${s()}`;
    case 'ge':
      return `${re} > ${e()} OR (${contained()})`;
    case 'le':
      return `${rs} < ${s()} OR (${contained()})`;
    case 'sa':
      return `${rs} >= ${e()}`;
    case 'eb':
      return `${re} <= ${s()}`;
  }
}

/**
 * Overlap with the search range widened on both sides by 10% of the distance between now and
 * the range (0 when now is inside it), and by at least a day.
 */
function approximateDate(
  params: SqlParams,
  startMs: number,
  endMs: number,
  target: SqlRange,
  now: number,
): string {
  const distance = now < startMs ? startMs - now : now >= endMs ? now - endMs : 0;
  const margin = Math.max(distance / 10, DAY);
  const s = params.add(instant(startMs - margin), 'timestamptz');
  const e = params.add(instant(endMs + margin), 'timestamptz');
  return `${target.start} < ${e} AND ${target.end} > ${s}`;
}

/** `make`, called the first time only: one parameter however often the SQL names it. */
function once(make: () => string): () => string {
  let made: string | undefined;
  return () => (made ??= make());
}

/** An ISO instant PostgreSQL reads; beyond years 0001–9999 (`+010000-…`), an infinity. */
function instant(ms: number): string {
  if (ms < FIRST_INSTANT) return '-infinity';
  if (ms >= AFTER_LAST_INSTANT) return 'infinity';
  return new Date(ms).toISOString();
}

/**
 * A number or quantity value against column `column`: eq and ne use the range the written
 * precision implies, [low, high); the comparisons use the value itself; ap is the precision range
 * or within 10% of the value, whichever is wider (computed in SQL numeric, exactly).
 */
export function numberCondition(
  params: SqlParams,
  value: NumberSearchValue | QuantitySearchValue,
  column: string,
): string {
  const equal = () =>
    `${column} >= ${params.add(value.low, 'numeric')} AND ${column} < ${params.add(value.high, 'numeric')}`;
  const v = once(() => params.add(value.value, 'numeric'));
  switch (value.prefix) {
    case 'eq':
      return equal();
    case 'ne':
      return `NOT (${equal()})`;
    case 'gt':
    case 'sa':
      return `${column} > ${v()}`;
    case 'lt':
    case 'eb':
      return `${column} < ${v()}`;
    case 'ge':
      return `${column} >= ${v()}`;
    case 'le':
      return `${column} <= ${v()}`;
    case 'ap': {
      const within = `${column} BETWEEN ${v()} - abs(${v()}) * 0.1 AND ${v()} + abs(${v()}) * 0.1`;
      return `(${equal()}) OR (${within})`;
    }
  }
}

/** A quantity value: the number, and the system and unit when the client gave them. */
export function quantityCondition(params: SqlParams, value: QuantitySearchValue): string {
  const conditions = [numberCondition(params, value, 'i.value')];
  if (value.system !== undefined) conditions.push(`i.system = ${params.add(value.system, 'text')}`);
  if (value.code !== undefined) conditions.push(`i.unit = ${params.add(value.code, 'text')}`);
  return allOf(conditions);
}

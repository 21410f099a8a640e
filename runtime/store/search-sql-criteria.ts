/**
 * One search criterion → SQL: a condition on the index table of the parameter's type, with the
 * criterion's values as alternatives (IndexMatch), or a condition on the resource row `r`.
 * @see http://hl7.org/fhir/R4/search.html
 */
import type { SearchCriterion, ValueCriterion } from '../search/parse-search-arguments.js';
import type {
  ResourceSearchDefinition,
  SearchParameterDefinition,
} from '../model/search-definition.js';
import { normalizeSearchText } from '../search/search-index.js';
import type {
  ReferenceSearchValue,
  SearchValue,
  TokenSearchValue,
} from '../search/search-value.js';
import {
  dateCondition,
  INDEXED_DATE_RANGE,
  LAST_UPDATED_RANGE,
  numberCondition,
  quantityCondition,
} from './search-sql-ordered.js';
import {
  allOf,
  anyOf,
  escapeLike,
  indexExists,
  isIndexedType,
  UnsupportedSearchError,
  type IndexedType,
  type SqlContext,
  type SqlParams,
} from './search-sql-params.js';

/** One value of a criterion → a condition on the index row `i`. */
type Matcher = (params: SqlParams, value: SearchValue) => string;

/** The parameter `code` names, with an index table; throws for unknown, composite and special. */
export function indexedParameter(
  definition: ResourceSearchDefinition,
  code: string,
): SearchParameterDefinition & { readonly type: IndexedType } {
  const parameter = Object.hasOwn(definition.parameters, code)
    ? definition.parameters[code]
    : undefined;
  if (!parameter) {
    throw new UnsupportedSearchError(
      `${code}: unknown search parameter for ${definition.resourceType}`,
    );
  }
  const { type } = parameter;
  if (!isIndexedType(type)) {
    throw new UnsupportedSearchError(`${code}: ${type} search parameters are not supported`);
  }
  return { ...parameter, type };
}

/**
 * A criterion that some index row of the resource must match: which rows (`type`, `code`) and
 * the condition on index row `i`. Search-sql.ts finds the ids meeting all of these in the index
 * tables before it reads any resource.
 */
export interface IndexMatch {
  readonly type: IndexedType;
  readonly code: string;
  readonly condition: string;
  /**
   * The value when the match is one token code without modifier (`code`, `system|code` or
   * `|code`): its rows are one value's, which search_token_recent (migrations/013) holds in
   * last-update order, and whose resources search_token_count (migrations/014) counts.
   */
  readonly tokenValue?: OneTokenValue;
}

/** A token search value with its code. */
export type OneTokenValue = TokenSearchValue & { readonly code: string };

/**
 * One criterion as SQL: an IndexMatch, or a condition on resource `r` itself (its id, its last
 * update, a parameter missing or present, a token it must not have).
 */
export type CriterionSql = { readonly match: IndexMatch } | { readonly condition: string };

export function criterionSql(
  context: SqlContext,
  definition: ResourceSearchDefinition,
  criterion: SearchCriterion,
): CriterionSql {
  const { type } = indexedParameter(definition, criterion.code);
  if (criterion.code === '_id') return { condition: idCondition(context, criterion) };
  if (criterion.code === '_lastUpdated')
    return { condition: lastUpdatedCondition(context, criterion) };
  if ('missing' in criterion) {
    const exists = indexExists(context, type, criterion.code);
    return { condition: criterion.missing ? `NOT ${exists}` : exists };
  }
  if (type === 'token' && criterion.modifier === 'not') {
    const alternatives = criterion.values.map((v) => tokenMatch(context.params, as(v, 'token')));
    return { condition: `NOT ${indexExists(context, type, criterion.code, anyOf(alternatives))}` };
  }
  const match = matcher(type, criterion);
  const alternatives = criterion.values.map((value) => match(context.params, value));
  const value = criterion.values.length === 1 ? criterion.values[0] : undefined;
  const tokenValue =
    type === 'token' &&
    criterion.modifier === undefined &&
    value?.type === 'token' &&
    value.code !== undefined
      ? (value as OneTokenValue)
      : undefined;
  const condition = anyOf(alternatives);
  return {
    match: { type, code: criterion.code, condition, ...(tokenValue ? { tokenValue } : {}) },
  };
}

function matcher(type: IndexedType, criterion: ValueCriterion): Matcher {
  const { modifier } = criterion;
  const key = `${type}${modifier === undefined ? '' : `:${modifier}`}`;
  const found = Object.hasOwn(MATCHERS, key) ? MATCHERS[key] : undefined;
  if (found) return found;
  // `subject:Patient=123`: a reference restricted to one target type.
  if (type === 'reference' && modifier !== undefined && /^[A-Z][A-Za-z]*$/.test(modifier)) {
    return (params, value) => referenceMatch(params, as(value, 'reference'), modifier);
  }
  throw new UnsupportedSearchError(
    `${criterion.code}: the modifier :${modifier} is not supported for ${type} parameters`,
  );
}

const MATCHERS: Readonly<Record<string, Matcher>> = {
  string: (p, v) => startsWith(p, 'i.value', normalizeSearchText(as(v, 'string').value)),
  'string:contains': (p, v) => {
    const pattern = `%${escapeLike(normalizeSearchText(as(v, 'string').value))}%`;
    return `i.value LIKE ${p.add(pattern, 'text')}`;
  },
  'string:exact': (p, v) => `i.exact = ${p.add(as(v, 'string').value, 'text')}`,
  token: (p, v) => tokenMatch(p, as(v, 'token')),
  'token:text': (p, v) => `i.text LIKE ${p.add(prefixPattern(as(v, 'string').value), 'text')}`,
  reference: (p, v) => referenceMatch(p, as(v, 'reference')),
  date: (p, v) => dateCondition(p, as(v, 'date'), INDEXED_DATE_RANGE),
  number: (p, v) => numberCondition(p, as(v, 'number'), 'i.value'),
  quantity: (p, v) => quantityCondition(p, as(v, 'quantity')),
  uri: (p, v) => `i.value = ${p.add(as(v, 'uri').value, 'text')}`,
  'uri:below': (p, v) => `i.value LIKE ${p.add(`${escapeLike(as(v, 'uri').value)}%`, 'text')}`,
  'uri:above': (p, v) => `starts_with(${p.add(as(v, 'uri').value, 'text')}, i.value)`,
};

/**
 * FHIR's default string match: the normalized value starts with the normalized search text. As
 * a range of the value index's text_pattern_ops order (byte order, which is code point order in
 * UTF-8) rather than `LIKE 'abc%'`: the planner finds that range for LIKE only when the pattern
 * is a constant, so a search kept prepared (database.ts) would scan every value of the code.
 */
function startsWith(params: SqlParams, column: string, prefix: string): string {
  if (prefix === '') return `${column} IS NOT NULL`;
  const from = `${column} ~>=~ ${params.add(prefix, 'text')}`;
  const next = successor(prefix);
  return next === undefined ? from : `${from} AND ${column} ~<~ ${params.add(next, 'text')}`;
}

/**
 * The least text greater than every text that starts with `text` (its last code point that can
 * grow, grown by one, past the surrogates); undefined when none can, so nothing bounds the range.
 */
export function successor(text: string): string | undefined {
  const points = Array.from(text);
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      const next = last + 1 >= 0xd800 && last + 1 <= 0xdfff ? 0xe000 : last + 1;
      return points.join('') + String.fromCodePoint(next);
    }
  }
  return undefined;
}

/** A LIKE pattern for "starts with the normalized search text" (columns without a range index). */
function prefixPattern(text: string): string {
  return `${escapeLike(normalizeSearchText(text))}%`;
}

/** `system|code`, `|code` (no system), `code` (any system), `system|` (any code in system). */
function tokenMatch(params: SqlParams, value: TokenSearchValue): string {
  const conditions: string[] = [];
  if (value.system === '') conditions.push('i.system IS NULL');
  else if (value.system !== undefined)
    conditions.push(`i.system = ${params.add(value.system, 'text')}`);
  if (value.code !== undefined) conditions.push(`i.value = ${params.add(value.code, 'text')}`);
  return allOf(conditions);
}

/**
 * `Type/id` → that target; `id` → that id of any type (or of `typeModifier`); an absolute or
 * canonical url → the url as written, or the `Type/id` it ends with. Versions are ignored: a
 * versioned reference finds the unversioned target.
 */
function referenceMatch(
  params: SqlParams,
  value: ReferenceSearchValue,
  typeModifier?: string,
): string {
  if (typeModifier && value.resourceType && typeModifier !== value.resourceType) return 'FALSE';
  const type = typeModifier ?? value.resourceType;
  const alternatives: string[] = [];
  if (value.id !== undefined) {
    const target = [`i.target_id = ${params.add(value.id, 'text')}`];
    if (type !== undefined) target.push(`i.target_type = ${params.add(type, 'text')}`);
    alternatives.push(allOf(target));
  }
  if (value.url !== undefined) alternatives.push(urlMatch(params, value.url, value.version));
  return anyOf(alternatives);
}

/** The url as written; a canonical `url|version` also matches the unversioned url, and vice versa. */
function urlMatch(params: SqlParams, url: string, version: string | undefined): string {
  const urls = version === undefined ? [url] : [url, `${url}|${version}`];
  const exact = `i.url = ANY(${params.add(urls, 'text[]')})`;
  if (version !== undefined) return exact;
  return `${exact} OR i.url LIKE ${params.add(`${escapeLike(url)}|%`, 'text')}`;
}

/** `_id` matches the resource's own id column. */
function idCondition(context: SqlContext, criterion: SearchCriterion): string {
  if ('missing' in criterion) return criterion.missing ? 'FALSE' : 'TRUE';
  const { modifier } = criterion;
  if (modifier !== undefined && modifier !== 'not') {
    throw new UnsupportedSearchError(`_id: the modifier :${modifier} is not supported`);
  }
  // An id has no system: `|id` names it too, `system|id` names nothing.
  const ids = criterion.values
    .map((value) => as(value, 'token'))
    .filter((value) => value.system === undefined || value.system === '')
    .flatMap((value) => (value.code === undefined ? [] : [value.code]));
  const match = `r.id = ANY(${context.params.add(ids, 'text[]')})`;
  return modifier === 'not' ? `NOT (${match})` : match;
}

/** `_lastUpdated` compares the resource's last_updated column, an instant. */
function lastUpdatedCondition(context: SqlContext, criterion: SearchCriterion): string {
  if ('missing' in criterion) return criterion.missing ? 'FALSE' : 'TRUE';
  if (criterion.modifier !== undefined) {
    throw new UnsupportedSearchError(
      `_lastUpdated: the modifier :${criterion.modifier} is not supported`,
    );
  }
  const { params } = context;
  return anyOf(
    criterion.values.map((value) => dateCondition(params, as(value, 'date'), LAST_UPDATED_RANGE)),
  );
}

/** The value, checked to be of the type the parameter and modifier call for. */
function as<T extends SearchValue['type']>(
  value: SearchValue,
  type: T,
): Extract<SearchValue, { type: T }> {
  if (value.type !== type) {
    throw new UnsupportedSearchError(`expected a ${type} search value, got a ${value.type}`);
  }
  return value as Extract<SearchValue, { type: T }>;
}

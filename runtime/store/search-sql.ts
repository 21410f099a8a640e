/**
 * Search criteria → SQL over the tables of migrations/001-resources.sql, one dialect for
 * PostgreSQL and PGlite. Every value is a `$n` parameter; the SQL text holds only fixed pieces
 * (table and column names from fixed maps, operators).
 *
 * Rows of search, include and revinclude queries: `resource_type, id, version_id`; the contents
 * come from version-contents.ts.
 * Text ordering uses the "C" collation, so both databases and every page agree on the order.
 * @see http://hl7.org/fhir/R4/search.html
 */
import type { SearchCriterion } from '../search/parse-search-arguments.js';
import type { ResourceSearchDefinition } from '../model/search-definition.js';
import { criterionSql, indexedParameter, type IndexMatch } from './search-sql-criteria.js';
import { chooseWalk, walkedRows } from './search-sql-walk.js';
import {
  indexExists,
  indexRows,
  SqlParams,
  type IndexedType,
  type SqlContext,
} from './search-sql-params.js';
import type { SearchQuery, SortKey } from './search-query.js';
import { keptTokenCount } from './search-sql-token-count.js';

export { UnsupportedSearchError } from './search-sql-params.js';

export interface SqlQuery {
  readonly text: string;
  readonly values: readonly unknown[];
}

export type SearchSqlOptions = Pick<SearchQuery, 'count' | 'offset' | 'sort'>;

const SELECTED = 'r.resource_type, r.id, r.version_id';
const TIE_BREAKER = 'r.id COLLATE "C"';

/** SELECT resource_type, id, version_id of matching, non-deleted resources of one type in one project, sorted and paged. */
export function buildSearchQuery(
  projectId: string,
  definition: ResourceSearchDefinition,
  criteria: readonly SearchCriterion[],
  options: SearchSqlOptions,
): SqlQuery {
  const context = searchContext(projectId, definition);
  const { conditions, matches } = splitCriteria(context, definition, criteria);
  const byLastUpdated = lastUpdatedOrder(options.sort);
  if (byLastUpdated && indexAnswers(conditions, matches)) {
    return pageFromIndex(context, matches, byLastUpdated, options);
  }
  const where = matchCondition(context, conditions, matches);
  const order = orderBy(context, definition, options.sort);
  const limit = context.params.add(pageNumber('count', options.count), 'bigint');
  const offset = context.params.add(pageNumber('offset', options.offset), 'bigint');
  const text =
    `SELECT ${SELECTED} FROM resource r\nWHERE ${where}\n` +
    `ORDER BY ${order}\nLIMIT ${limit} OFFSET ${offset}`;
  return { text, values: context.params.values };
}

/**
 * A page in last-update order when every criterion is an index match: the index rows carry the
 * version they index and its last update (migrations/006, 007), so the page is sorted,
 * deduplicated and cut from the index rows alone, and no resource row is read: sorting by the
 * resource rows read the resource of every match, not only the page's. Index rows exist only for current, non-deleted
 * versions (write-versions.ts), written with them, so the order, the page and the versions are
 * those of the resources. The GROUP BY lists the page's order first, so that an index in that
 * order (migrations/013) gives the groups in page order and the page stops at its last row.
 * Several criteria, one of them a token value, are walked in that order where the walk can pay
 * (search-sql-walk.ts).
 */
function pageFromIndex(
  context: SqlContext,
  matches: readonly IndexMatch[],
  direction: 'ASC' | 'DESC',
  options: SearchSqlOptions,
): SqlQuery {
  const count = pageNumber('count', options.count);
  const offset = pageNumber('offset', options.offset);
  const ids = idsMatchingAll(context, matches, true);
  const walk = chooseWalk(matches, count, offset + count);
  const source = walk
    ? walkedRows(context, walk, direction, offset + count, ids)
    : { with: '', rows: ids };
  const limit = context.params.add(count, 'bigint');
  const offsetParam = context.params.add(offset, 'bigint');
  const text =
    `${source.with}SELECT ${context.resourceType} AS resource_type, m.id, m.version_id FROM (${source.rows}) m\n` +
    `GROUP BY m.last_updated, m.id, m.version_id\n` +
    `ORDER BY m.last_updated ${direction}, m.id COLLATE "C" LIMIT ${limit} OFFSET ${offsetParam}`;
  return { text, values: context.params.values };
}

/** The direction of a sort by last update alone (none given is newest first); else undefined. */
function lastUpdatedOrder(sort: readonly SortKey[]): 'ASC' | 'DESC' | undefined {
  if (sort.length === 0) return 'DESC';
  if (sort.length === 1 && sort[0].code === '_lastUpdated') {
    return sort[0].descending ? 'DESC' : 'ASC';
  }
  return undefined;
}

/**
 * SELECT count(*) AS total (an integer) of the resources buildSearchQuery matches, on all pages:
 * from the counts kept for a search by one token value (search-sql-token-count.ts); else from
 * the index rows alone when every criterion is an index match (see pageFromIndex).
 */
export function buildCountQuery(
  projectId: string,
  definition: ResourceSearchDefinition,
  criteria: readonly SearchCriterion[],
): SqlQuery {
  const context = searchContext(projectId, definition);
  const { conditions, matches } = splitCriteria(context, definition, criteria);
  const [only] = matches;
  if (conditions.length === 0 && matches.length === 1 && only.tokenValue) {
    // A context of its own: the match's condition, unused, would leave parameters untyped.
    const counting = searchContext(projectId, definition);
    const text = keptTokenCount(counting, only, only.tokenValue);
    return { text, values: counting.params.values };
  }
  if (indexAnswers(conditions, matches)) {
    const ids = idsMatchingAll(context, matches);
    const text = `SELECT count(DISTINCT x.id)::integer AS total FROM (${ids}) x`;
    return { text, values: context.params.values };
  }
  const where = matchCondition(context, conditions, matches);
  const text = `SELECT count(*)::integer AS total FROM resource r\nWHERE ${where}`;
  return { text, values: context.params.values };
}

/**
 * `_include`: the non-deleted resources that `sourceIds` (of `sourceType`) point to through
 * reference parameter `code`, only of `targetType` when given; each once, by type and id.
 */
export function buildIncludeQuery(
  projectId: string,
  sourceType: string,
  sourceIds: readonly string[],
  code: string,
  targetType?: string,
): SqlQuery {
  const params = new SqlParams();
  const project = params.add(projectId, 'text');
  const targets =
    `SELECT i.target_type, i.target_id FROM search_reference i WHERE i.project_id = ${project}` +
    ` AND i.resource_type = ${params.add(sourceType, 'text')}` +
    ` AND i.code = ${params.add(code, 'text')} AND i.id = ANY(${params.add(sourceIds, 'text[]')})`;
  const conditions = [
    `r.project_id = ${project}`,
    'r.deleted = false',
    `(r.resource_type, r.id) IN (${targets})`,
  ];
  if (targetType !== undefined) {
    conditions.push(`r.resource_type = ${params.add(targetType, 'text')}`);
  }
  const text =
    `SELECT ${SELECTED} FROM resource r\nWHERE ${conditions.join('\n  AND ')}\n` +
    `ORDER BY r.resource_type COLLATE "C", ${TIE_BREAKER}`;
  return { text, values: params.values };
}

/** `_revinclude`: non-deleted resources of `sourceType` whose reference parameter `code` points to one of `targets`. */
export function buildRevIncludeQuery(
  projectId: string,
  sourceType: string,
  code: string,
  targets: readonly { type: string; id: string }[],
): SqlQuery {
  const params = new SqlParams();
  const context: SqlContext = {
    params,
    project: params.add(projectId, 'text'),
    resourceType: params.add(sourceType, 'text'),
  };
  const types = params.add(
    targets.map((target) => target.type),
    'text[]',
  );
  const ids = params.add(
    targets.map((target) => target.id),
    'text[]',
  );
  const pointsAtTarget =
    `(i.target_type, i.target_id) IN (SELECT t.target_type, t.target_id` +
    ` FROM unnest(${types}, ${ids}) AS t(target_type, target_id))`;
  const text =
    `SELECT ${SELECTED} FROM resource r\nWHERE ${resourceOfType(context)}\n` +
    `  AND EXISTS (SELECT 1 ${indexRows(context, 'reference', code)} AND ${pointsAtTarget})\n` +
    `ORDER BY ${TIE_BREAKER}`;
  return { text, values: params.values };
}

function searchContext(projectId: string, definition: ResourceSearchDefinition): SqlContext {
  const params = new SqlParams();
  return {
    params,
    project: params.add(projectId, 'text'),
    resourceType: params.add(definition.resourceType, 'text'),
  };
}

/** The current, non-deleted resources of the context's project and type. */
function resourceOfType({ project, resourceType }: SqlContext): string {
  return `r.project_id = ${project} AND r.resource_type = ${resourceType} AND r.deleted = false`;
}

/** The criteria as conditions on resource `r` and as index matches. */
function splitCriteria(
  context: SqlContext,
  definition: ResourceSearchDefinition,
  criteria: readonly SearchCriterion[],
): { conditions: string[]; matches: IndexMatch[] } {
  const conditions: string[] = [];
  const matches: IndexMatch[] = [];
  for (const criterion of criteria) {
    const sql = criterionSql(context, definition, criterion);
    if ('match' in sql) matches.push(sql.match);
    else conditions.push(`(${sql.condition})`);
  }
  return { conditions, matches };
}

/**
 * Whether the index rows alone decide which resources match: every criterion is an index match
 * (none is a condition on the resource row), and there is at least one. Index rows exist only for
 * current, non-deleted versions (write-versions.ts), so no resource row need be read to check.
 */
function indexAnswers(conditions: readonly string[], matches: readonly IndexMatch[]): boolean {
  return conditions.length === 0 && matches.length > 0;
}

/** Non-deleted resources of the type and project that meet every condition and match. */
function matchCondition(
  context: SqlContext,
  conditions: readonly string[],
  matches: readonly IndexMatch[],
): string {
  const all = [resourceOfType(context), ...conditions];
  if (matches.length > 0) all.push(`r.id IN (${idsMatchingAll(context, matches)})`);
  return all.join('\n  AND ');
}

/**
 * The ids whose index rows meet every match, found in the index tables alone (index-only scans,
 * migrations/005) before any resource row is read: the first match's rows, each kept when the
 * others have a row for its id too, so the planner may probe or merge them by id. Correlating
 * every match with the resource row instead read the resources of all the first match's ids,
 * several times the pages. With `withVersion`, each id comes with its
 * resource's version and last update, from the first match's rows.
 */
function idsMatchingAll(
  context: SqlContext,
  [first, ...rest]: readonly IndexMatch[],
  withVersion = false,
): string {
  const columns = withVersion ? 'i.id, i.last_updated, i.version_id' : 'i.id';
  const firstIds = `SELECT ${columns} ${indexRows(context, first.type, first.code, null)} AND (${first.condition})`;
  if (rest.length === 0) return firstIds;
  const others = rest.map((match) =>
    indexExists(context, match.type, match.code, match.condition, 'm.id'),
  );
  const selected = withVersion ? 'm.id, m.last_updated, m.version_id' : 'm.id';
  return `SELECT ${selected} FROM (${firstIds}) m WHERE ${others.join(' AND ')}`;
}

/** What each indexed type sorts by; a Period without start sorts as the earliest date. */
const SORT_VALUES: Readonly<Record<IndexedType, string>> = {
  string: 'i.value COLLATE "C"',
  token: 'i.value COLLATE "C"',
  reference: 'i.target_id COLLATE "C"',
  date: `coalesce(i.start_at, '-infinity'::timestamptz)`,
  number: 'i.value',
  quantity: 'i.value',
  uri: 'i.value COLLATE "C"',
};

/** The sort keys, then id so that pages never overlap; newest first without keys. */
function orderBy(
  context: SqlContext,
  definition: ResourceSearchDefinition,
  sort: readonly SortKey[],
): string {
  if (sort.length === 0) return `r.last_updated DESC, ${TIE_BREAKER}`;
  return [...sort.map((key) => sortExpression(context, definition, key)), TIE_BREAKER].join(', ');
}

/** Ascending by a resource's smallest value of the parameter, descending by its largest; resources without one last. */
function sortExpression(
  context: SqlContext,
  definition: ResourceSearchDefinition,
  { code, descending }: SortKey,
): string {
  const direction = descending ? 'DESC' : 'ASC';
  if (code === '_id') return `r.id COLLATE "C" ${direction}`;
  if (code === '_lastUpdated') return `r.last_updated ${direction}`;
  const { type } = indexedParameter(definition, code);
  const aggregate = `${descending ? 'max' : 'min'}(${SORT_VALUES[type]})`;
  return `(SELECT ${aggregate} ${indexRows(context, type, code)}) ${direction} NULLS LAST`;
}

function pageNumber(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
  return value;
}

/** Which of `ids` (of `resourceType`) point to which targets through reference parameter `code`. */
export function buildReferenceTargetsQuery(
  projectId: string,
  resourceType: string,
  code: string,
  ids: readonly string[],
): SqlQuery {
  return {
    text: `SELECT id, target_type, target_id FROM search_reference
            WHERE project_id = $1::text AND resource_type = $2::text AND code = $3::text AND id = ANY($4::text[])`,
    values: [projectId, resourceType, code, ids],
  };
}

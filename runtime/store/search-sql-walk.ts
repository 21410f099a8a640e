/**
 * Pages of several index matches in last-update order, walked: one token value's rows come from
 * search_token_recent (migrations/013) in the page's order, each resource is probed for the
 * other criteria, and the walk stops once the page is full. Joining the matches by id instead
 * reads every row of each and sorts every match for one page; PostgreSQL keeps that plan (a hash
 * join) in whichever order the criteria are written, as it expects a small fraction of the matches
 * there are (it estimates the semi join of two criteria's ids far too low).
 *
 * The walk is bounded, and tried only where it can pay; where it cannot, the join answers in the
 * same statement. What decides is known cheaply, in the statement itself:
 * - every probed criterion matches at least as many rows as the walk may probe (counted with that
 *   LIMIT): with fewer, the join reads fewer rows than the walk would probe (a city nobody lives
 *   in, a rare code, one patient's Observations);
 * - the walk probes at most WALK_PER_PAGE_ROW resources per resource of the page: reaching that
 *   bound short of a full page means the other criteria match fewer walked resources than that,
 *   and the join answers after it;
 * - the walk goes past a first sample only when the sample matched at that rate: criteria each
 *   common but seldom together stop it there rather than at its bound.
 */
import type { IndexMatch } from './search-sql-criteria.js';
import { INDEX_TABLES, indexRows, type SqlContext } from './search-sql-params.js';

/**
 * The walk's bound, in resources probed per resource of the page (its offset included). Each
 * probe costs several times an index row that the join reads; a page whose other criteria match
 * one walked resource in 6 (a city among 6) is full after about 6 per row, and 16 leaves room for
 * the newest resources to match less often than the rest.
 */
export const WALK_PER_PAGE_ROW = 16;

/**
 * Pages ending past this many resources are not walked: the walk grows with the offset, the join
 * does not.
 */
export const MAX_WALKED_PAGE_END = 100;

/**
 * The walk goes past its first WALK_SAMPLE resources only when at least WALK_SAMPLE_MATCHES of
 * them matched: the rate at which the page fills within the bound (1 in WALK_PER_PAGE_ROW). At a
 * lower rate the walk would most likely reach its bound and then leave the page to the join, as
 * where criteria each common are seldom together (a given name and a family name); it stops
 * after the sample instead.
 */
export const WALK_SAMPLE = 64;
export const WALK_SAMPLE_MATCHES = WALK_SAMPLE / WALK_PER_PAGE_ROW;

export interface Walk {
  /** The criterion whose rows are walked in the page's order. */
  readonly walked: IndexMatch;
  /** The criteria each walked resource is probed for. */
  readonly probed: readonly IndexMatch[];
}

/**
 * The walk for a page ending at `pageEnd` (offset + count): the first criterion of one token
 * value walked, the others probed; none with fewer than two criteria, none of one token value,
 * an empty page, or a page ending past MAX_WALKED_PAGE_END.
 */
export function chooseWalk(
  matches: readonly IndexMatch[],
  count: number,
  pageEnd: number,
): Walk | undefined {
  if (matches.length < 2 || count === 0 || pageEnd > MAX_WALKED_PAGE_END) return undefined;
  const walked = matches.find((match) => match.tokenValue);
  if (walked === undefined) return undefined;
  return { walked, probed: matches.filter((match) => match !== walked) };
}

/** A WITH clause, and the rows (`id, last_updated, version_id`) a page is cut from. */
export interface WalkedRows {
  readonly with: string;
  readonly rows: string;
}

/**
 * The rows of a page ending at `pageEnd` in last-update order `direction`: the walk's matches,
 * when it found the page's end or probed every row of its value; else the rows of `joined`
 * (every criterion's ids joined, with last update and version), which is then run.
 * The decision and both sources are CTEs and subqueries gated by one-time filters: PostgreSQL
 * runs the walk only as far as the page needs, and the join only when the walk did not answer.
 * A CTE is read in the order its rows were made, so `LIMIT` and `OFFSET` on `walked` take its
 * first rows in the page's order, and the LIMIT on `found` its first matches.
 */
export function walkedRows(
  context: SqlContext,
  { walked, probed }: Walk,
  direction: 'ASC' | 'DESC',
  pageEnd: number,
  joined: string,
): WalkedRows {
  const { params } = context;
  const bound = params.add(pageEnd * WALK_PER_PAGE_ROW, 'bigint');
  const end = params.add(pageEnd, 'bigint');
  const sample = params.add(WALK_SAMPLE, 'bigint');
  const sampleMatches = params.add(WALK_SAMPLE_MATCHES, 'bigint');
  const probes = probed.map((match) => probe(context, match)).join(' AND ');
  const walkedValue = `${indexRows(context, 'token', walked.code, null)} AND (${walked.condition})`;
  const sampleMatched = `(SELECT count(*) FROM sampled) >= ${sampleMatches}`;
  // Every row of the walked value probed: fewer than the bound, and past the sample if any.
  const probedAll =
    `(SELECT count(*) FROM walked) < ${bound}` +
    ` AND ((SELECT count(*) FROM walked) <= ${sample} OR ${sampleMatched})`;
  const ctes = {
    probed_common: `SELECT ${probed.map((match) => hasRows(context, match, bound)).join(' AND ')} AS yes`,
    // Grouped in the page's order, as the index gives it, so that the groups come as walked.
    walked:
      `SELECT i.id, i.last_updated, i.version_id ${walkedValue} AND (SELECT yes FROM probed_common)` +
      ` GROUP BY i.last_updated, i.id, i.version_id` +
      ` ORDER BY i.last_updated ${direction}, i.id COLLATE "C" LIMIT ${bound}`,
    sampled: `SELECT w.* FROM (SELECT * FROM walked LIMIT ${sample}) w WHERE ${probes} LIMIT ${end}`,
    found:
      `SELECT * FROM sampled UNION ALL (SELECT w.* FROM (SELECT * FROM walked OFFSET ${sample}) w` +
      ` WHERE ${sampleMatched} AND ${probes}) LIMIT ${end}`,
    walk:
      `SELECT (SELECT yes FROM probed_common)` +
      ` AND ((SELECT count(*) FROM found) = ${end} OR (${probedAll})) AS answers`,
  };
  const withClause = `WITH ${Object.entries(ctes)
    .map(([name, query]) => `${name} AS MATERIALIZED (${query})`)
    .join(',\n')}\n`;
  const rows =
    `SELECT f.id, f.last_updated, f.version_id FROM found f WHERE (SELECT answers FROM walk)\n` +
    `UNION ALL\n` +
    `SELECT j.id, j.last_updated, j.version_id FROM (${joined}) j WHERE NOT (SELECT answers FROM walk)`;
  return { with: withClause, rows };
}

/** Whether `match` has at least `bound` index rows, reading no more than that many. */
function hasRows(context: SqlContext, match: IndexMatch, bound: string): string {
  const rows = `SELECT 1 ${indexRows(context, match.type, match.code, null)} AND (${match.condition})`;
  return `(SELECT count(*) FROM (${rows} LIMIT ${bound}) c) = ${bound}`;
}

/**
 * Whether walked resource `w` has a row meeting `match`, run once per walked resource. Each OFFSET 0
 * is a fence PostgreSQL plans around: the outer one keeps it from turning the EXISTS into a semi
 * join (which it would plan as the join the walk replaces, and which would not keep the walked
 * rows' order that `found`'s LIMIT relies on); the inner one keeps the match's condition out of
 * the scan, which then reads the resource's rows by id. Given the condition, a kept (generic)
 * plan expects a handful of rows for any value and scans the value's rows for the id instead:
 * every row of a common city, for each walked resource.
 */
function probe(context: SqlContext, match: IndexMatch): string {
  const { params, project, resourceType } = context;
  const resourceRows =
    `SELECT * FROM ${INDEX_TABLES[match.type]} i` +
    ` WHERE i.project_id = ${project} AND i.resource_type = ${resourceType} AND i.id = w.id OFFSET 0`;
  const code = params.add(match.code, 'text');
  return `EXISTS (SELECT 1 FROM (${resourceRows}) i WHERE i.code = ${code} AND (${match.condition}) OFFSET 0)`;
}

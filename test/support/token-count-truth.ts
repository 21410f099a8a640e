/**
 * The kept token counts (migrations/014) against what they count: for every key of every
 * project, the sum of its delta rows and `count(DISTINCT id)` of the token index rows it stands
 * for. Keys whose count is 0 are left out of both.
 */
import type { Queryable } from '../../runtime/store/database.js';

interface KeyCount {
  readonly key: string;
  readonly count: number;
}

/** `project type code system|value` (system `-` for none), or `… *|value` for any system. */
const KEY = `project_id || ' ' || resource_type || ' ' || code || ' ' || coalesce(system, '-') || '|' || value`;
const ANY_KEY = `project_id || ' ' || resource_type || ' ' || code || ' *|' || value`;

/** What the index rows say: resources per value in each system, and per value in any. */
const COUNTED = `
  SELECT ${KEY} AS key, count(DISTINCT id)::integer AS count FROM search_token
  WHERE value IS NOT NULL GROUP BY project_id, resource_type, code, system, value
  UNION ALL
  SELECT ${ANY_KEY}, count(DISTINCT id)::integer FROM search_token
  WHERE value IS NOT NULL GROUP BY project_id, resource_type, code, value`;

/** What the kept counts say, read as search-sql-token-count.ts reads them. */
const KEPT = `
  SELECT ${KEY} AS key, sum(delta)::integer AS count FROM search_token_count
  WHERE NOT any_system GROUP BY project_id, resource_type, code, system, value
  UNION ALL
  SELECT ${ANY_KEY}, sum(delta)::integer FROM search_token_count
  GROUP BY project_id, resource_type, code, value`;

async function counts(db: Queryable, sql: string): Promise<Record<string, number>> {
  const { rows } = await db.query<KeyCount>(sql);
  const nonZero = rows.filter((row) => row.count !== 0).sort((a, b) => (a.key < b.key ? -1 : 1));
  return Object.fromEntries(nonZero.map((row) => [row.key, row.count]));
}

/** Every key's kept count and its count from the index rows, for `expect(kept).toEqual(counted)`. */
export async function tokenCountsAndTruth(
  db: Queryable,
): Promise<{ kept: Record<string, number>; counted: Record<string, number> }> {
  return { kept: await counts(db, KEPT), counted: await counts(db, COUNTED) };
}

/** The delta rows of the project's kept counts, folded or not. */
export async function tokenCountRows(db: Queryable, projectId: string): Promise<number> {
  const { rows } = await db.query<{ rows: number }>(
    'SELECT count(*)::integer AS rows FROM search_token_count WHERE project_id = $1',
    [projectId],
  );
  return rows[0].rows;
}

/**
 * Runs a search: the matching page, the total when asked for, and _include/_revinclude
 * resources. Statements: one for the page, one for the total, one per include.
 */
import { loadSearchDefinition } from '../../generated/search/index.js';
import type { FhirResource } from '../model/fhir-resource.js';
import type { Queryable } from './database.js';
import type { SearchQuery } from './search-query.js';
import {
  buildCountQuery,
  buildIncludeQuery,
  buildRevIncludeQuery,
  buildSearchQuery,
  type SqlQuery,
} from './search-sql.js';
import type { VersionContents, VersionKey } from './version-contents.js';

/** Where a search runs (the database, or a transaction), and the contents of versions read. */
export interface SearchSource {
  readonly db: Queryable;
  readonly contents: VersionContents;
  /** False in a transaction: versions it wrote may never commit, so none it reads are kept. */
  readonly keep: boolean;
}

export interface SearchResult {
  readonly matches: readonly FhirResource[];
  readonly included: readonly FhirResource[];
  /** Absent when the request said `_total=none`. */
  readonly total?: number;
}

export async function searchResources(
  source: SearchSource,
  projectId: string,
  resourceType: string,
  request: SearchQuery,
): Promise<SearchResult> {
  const definition = loadSearchDefinition(resourceType);
  const wantsTotal = request.summaryCount || request.total !== 'none';
  const [matches, total] = await Promise.all([
    request.summaryCount
      ? []
      : resources(
          source,
          projectId,
          buildSearchQuery(projectId, definition, request.criteria, request),
        ),
    wantsTotal
      ? countOf(source.db, buildCountQuery(projectId, definition, request.criteria))
      : undefined,
  ]);
  const included = await includes(source, projectId, matches, request);
  return { matches, included, ...(total === undefined ? {} : { total }) };
}

async function includes(
  source: SearchSource,
  projectId: string,
  matches: readonly FhirResource[],
  request: Pick<SearchQuery, 'include' | 'revinclude'>,
): Promise<FhirResource[]> {
  if (matches.length === 0 || request.include.length + request.revinclude.length === 0) return [];
  const seen = new Set(matches.map((r) => `${r.resourceType}/${r.id}`));
  const found: FhirResource[] = [];
  const add = (list: readonly FhirResource[]) => {
    for (const resource of list) {
      const key = `${resource.resourceType}/${resource.id}`;
      if (!seen.has(key)) (found.push(resource), seen.add(key));
    }
  };
  for (const { sourceType, code, targetType } of request.include) {
    const ids = matches.filter((r) => r.resourceType === sourceType).map((r) => r.id!);
    if (ids.length)
      add(
        await resources(
          source,
          projectId,
          buildIncludeQuery(projectId, sourceType, ids, code, targetType),
        ),
      );
  }
  for (const { sourceType, code } of request.revinclude) {
    const targets = matches.map((r) => ({ type: r.resourceType, id: r.id! }));
    add(
      await resources(
        source,
        projectId,
        buildRevIncludeQuery(projectId, sourceType, code, targets),
      ),
    );
  }
  return found;
}

/** Search texts depend only on the request's shape (values are parameters): they recur. */
const RECURRING = { prepared: 'recurring' } as const;

/** The matches' contents, shared copies kept by version (version-contents.ts). */
async function resources(
  { db, contents, keep }: SearchSource,
  projectId: string,
  query: SqlQuery,
): Promise<readonly FhirResource[]> {
  const { rows } = await db.query<VersionKey>(query.text, query.values, RECURRING);
  return contents.contents(db, projectId, rows, keep);
}

async function countOf(db: Queryable, query: SqlQuery): Promise<number> {
  const { rows } = await db.query<{ total: string | number }>(query.text, query.values, RECURRING);
  return Number(rows[0]?.total ?? 0);
}

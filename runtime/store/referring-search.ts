/**
 * Resources of one type whose reference parameter points to any of several targets, each
 * target with its own matches: a GraphQL level's `DiagnosticReportList(_reference: subject)` for
 * all of its Patients at once. Two statements: the search for every target, then which target
 * each match points to (only when there are several targets).
 */
import type { FhirResource } from '../model/fhir-resource.js';
import type { SearchCriterion } from '../search/parse-search-arguments.js';
import type { SortKey } from './search-query.js';
import { searchResources, type SearchSource } from './search-store.js';
import { buildReferenceTargetsQuery } from './search-sql.js';

export interface ReferringSearch {
  readonly resourceType: string;
  /** The reference parameter: `subject`. */
  readonly code: string;
  readonly criteria: readonly SearchCriterion[];
  readonly sort: readonly SortKey[];
  readonly targets: readonly { readonly resourceType: string; readonly id: string }[];
}

/** The most matches one search reads for all its targets; beyond it, a target's list is cut. */
const MAX_MATCHES = 10_000;

/** Each target's matches in search order, by `Type/id`. */
export async function searchReferring(
  source: SearchSource,
  projectId: string,
  { resourceType, code, criteria, sort, targets }: ReferringSearch,
): Promise<Map<string, FhirResource[]>> {
  const values = targets.map((t) => ({
    type: 'reference' as const,
    resourceType: t.resourceType,
    id: t.id,
  }));
  const { matches } = await searchResources(source, projectId, resourceType, {
    criteria: [...criteria, { code, values }],
    count: MAX_MATCHES,
    offset: 0,
    sort,
    total: 'none',
    summaryCount: false,
    include: [],
    revinclude: [],
  });
  const keys = targets.map((t) => `${t.resourceType}/${t.id}`);
  // One target: every match points to it.
  if (keys.length === 1) return new Map([[keys[0], [...matches]]]);
  const targetsOf = await referenceTargets(source, projectId, resourceType, code, matches);
  return new Map(keys.map((key) => [key, matches.filter((m) => targetsOf.get(m.id!)?.has(key))]));
}

/** What each match's parameter `code` points to, as `Type/id`s, by the match's id. */
async function referenceTargets(
  source: SearchSource,
  projectId: string,
  resourceType: string,
  code: string,
  matches: readonly FhirResource[],
): Promise<Map<string, Set<string>>> {
  const targetsOf = new Map<string, Set<string>>();
  if (matches.length === 0) return targetsOf;
  const { text, values } = buildReferenceTargetsQuery(
    projectId,
    resourceType,
    code,
    matches.map((m) => m.id!),
  );
  const { rows } = await source.db.query<{
    id: string;
    target_type: string | null;
    target_id: string | null;
  }>(
    text,
    values,
    // One text whatever the ids (an array parameter).
    { prepared: 'fixed' },
  );
  for (const row of rows) {
    const set = targetsOf.get(row.id) ?? new Set<string>();
    set.add(`${row.target_type}/${row.target_id}`);
    targetsOf.set(row.id, set);
  }
  return targetsOf;
}

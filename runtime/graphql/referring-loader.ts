/**
 * Reverse references for every parent of one GraphQL level in two SQL statements: a Patient
 * list's `DiagnosticReportList(_reference: subject)` asks once for the reports of all the
 * Patients, then once for which Patient each report points to, and each parent takes its own,
 * paged as it asked. Without this, a list of 50 Patients would cost 50 searches (N+1). With one
 * parent the second statement is not needed; different lists of one level run side by side.
 */
import DataLoader from 'dataloader';
import type { SortKey } from '../store/search-query.js';
import { searchResources, type SearchSource } from '../store/search-store.js';
import { buildReferenceTargetsQuery } from '../store/search-sql.js';
import type { SearchCriterion } from '../search/parse-search-arguments.js';
import type { FhirResource } from '../model/fhir-resource.js';

export interface ReferringRequest {
  readonly resourceType: string;
  readonly code: string;
  readonly criteria: readonly SearchCriterion[];
  readonly sort: readonly SortKey[];
  readonly target: { readonly resourceType: string; readonly id: string };
}

/** Every match for the parent, in search order; the caller pages. */
export type ReferringLoader = DataLoader<ReferringRequest, FhirResource[], string>;

/** The most matches one batched search reads; beyond it, a parent's list is cut. */
const BATCH_LIMIT = 10_000;

export function createReferringLoader(source: SearchSource, projectId: string): ReferringLoader {
  return new DataLoader(
    async (requests) => {
      const groups = new Map<string, ReferringRequest[]>();
      for (const request of requests) {
        const key = groupKey(request);
        groups.set(key, [...(groups.get(key) ?? []), request]);
      }
      const answers = new Map<string, FhirResource[]>();
      const loaded = await Promise.all(
        [...groups.values()].map((group) => loadGroup(source, projectId, group)),
      );
      for (const group of loaded) for (const [key, list] of group) answers.set(key, list);
      return requests.map((request) => answers.get(requestKey(request)) ?? []);
    },
    { cacheKeyFn: requestKey },
  );
}

async function loadGroup(
  source: SearchSource,
  projectId: string,
  group: readonly ReferringRequest[],
): Promise<Map<string, FhirResource[]>> {
  const { resourceType, code, criteria, sort } = group[0];
  const values = group.map((r) => ({
    type: 'reference' as const,
    resourceType: r.target.resourceType,
    id: r.target.id,
  }));
  const { matches } = await searchResources(source, projectId, resourceType, {
    criteria: [...criteria, { code, values }],
    count: BATCH_LIMIT,
    offset: 0,
    sort,
    total: 'none',
    summaryCount: false,
    include: [],
    revinclude: [],
  });
  // One parent (a single resource's reverse reference): every match points to it.
  if (group.length === 1) return new Map([[requestKey(group[0]), [...matches]]]);
  const links = matches.length
    ? await source.db.query<{ id: string; target_type: string | null; target_id: string | null }>(
        ...queryArgs(
          buildReferenceTargetsQuery(
            projectId,
            resourceType,
            code,
            matches.map((m) => m.id!),
          ),
        ),
        // One text whatever the ids (an array parameter).
        { prepared: 'fixed' },
      )
    : { rows: [] };
  const targetsOf = new Map<string, Set<string>>();
  for (const row of links.rows) {
    const set = targetsOf.get(row.id) ?? new Set<string>();
    set.add(`${row.target_type}/${row.target_id}`);
    targetsOf.set(row.id, set);
  }
  return new Map(
    group.map((request) => {
      const target = `${request.target.resourceType}/${request.target.id}`;
      return [requestKey(request), matches.filter((m) => targetsOf.get(m.id!)?.has(target))];
    }),
  );
}

function queryArgs(query: {
  text: string;
  values: readonly unknown[];
}): [string, readonly unknown[]] {
  return [query.text, query.values];
}

function groupKey(request: ReferringRequest): string {
  return JSON.stringify([request.resourceType, request.code, request.criteria, request.sort]);
}

function requestKey(request: ReferringRequest): string {
  return `${groupKey(request)}|${request.target.resourceType}/${request.target.id}`;
}

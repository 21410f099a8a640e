/**
 * Reverse references for every parent of one GraphQL level at once: a Patient list's
 * `DiagnosticReportList(_reference: subject)` asks the store once for the reports of all the
 * Patients (store/referring-search.ts), and each parent takes its own, paged as it asked.
 * Without this, a list of 50 Patients would cost 50 searches (N+1). Different lists of one level
 * run side by side.
 */
import DataLoader from 'dataloader';
import type { FhirResource } from '../model/fhir-resource.js';
import type { SearchCriterion } from '../search/parse-search-arguments.js';
import { searchReferring } from '../store/referring-search.js';
import type { SortKey } from '../store/search-query.js';
import type { SearchSource } from '../store/search-store.js';

export interface ReferringRequest {
  readonly resourceType: string;
  readonly code: string;
  readonly criteria: readonly SearchCriterion[];
  readonly sort: readonly SortKey[];
  readonly target: { readonly resourceType: string; readonly id: string };
}

/** Every match for the parent, in search order; the caller pages. */
export type ReferringLoader = DataLoader<ReferringRequest, FhirResource[], string>;

export function createReferringLoader(source: SearchSource, projectId: string): ReferringLoader {
  return new DataLoader(
    async (requests) => {
      const groups = new Map<string, ReferringRequest[]>();
      for (const request of requests) {
        const key = groupKey(request);
        groups.set(key, [...(groups.get(key) ?? []), request]);
      }
      const answers = await Promise.all(
        [...groups.values()].map((group) => {
          const { resourceType, code, criteria, sort } = group[0];
          const targets = group.map((request) => request.target);
          return searchReferring(source, projectId, {
            resourceType,
            code,
            criteria,
            sort,
            targets,
          });
        }),
      );
      const byRequest = new Map<string, FhirResource[]>();
      [...groups.values()].forEach((group, i) => {
        for (const request of group)
          byRequest.set(requestKey(request), answers[i].get(targetKey(request)) ?? []);
      });
      return requests.map((request) => byRequest.get(requestKey(request)) ?? []);
    },
    { cacheKeyFn: requestKey },
  );
}

function groupKey(request: ReferringRequest): string {
  return JSON.stringify([request.resourceType, request.code, request.criteria, request.sort]);
}

function targetKey(request: ReferringRequest): string {
  return `${request.target.resourceType}/${request.target.id}`;
}

function requestKey(request: ReferringRequest): string {
  return `${groupKey(request)}|${targetKey(request)}`;
}

/**
 * A search as the store runs it, whoever asked: REST's query string (runtime/rest/search-request.ts),
 * GraphQL's arguments, a bot's `fhir` call. Each turns its own syntax into this.
 * @see http://hl7.org/fhir/R4/search.html
 */
import type { SearchCriterion } from '../search/parse-search-arguments.js';

/** One `_sort` key: `_sort=-date,name` is `[{code: 'date', descending: true}, {code: 'name', …}]`. */
export interface SortKey {
  readonly code: string;
  readonly descending: boolean;
}

/** `_include` / `_revinclude`: `Observation:subject:Patient` → source Observation, code subject, target Patient. */
export interface IncludeRequest {
  readonly sourceType: string;
  readonly code: string;
  readonly targetType?: string;
}

export interface SearchQuery {
  /** All must match. */
  readonly criteria: readonly SearchCriterion[];
  /** Page size and rows to skip, non-negative integers. */
  readonly count: number;
  readonly offset: number;
  readonly sort: readonly SortKey[];
  readonly total: 'none' | 'estimate' | 'accurate';
  /** `_summary=count`: the total alone. */
  readonly summaryCount: boolean;
  readonly include: readonly IncludeRequest[];
  readonly revinclude: readonly IncludeRequest[];
}

/**
 * What GraphQL resolvers reach the store through. The server gives each request its own
 * instance, bound to the caller's project and scopes, so that batching and access checks live
 * in one place and resolvers stay generic.
 */
import type { FhirResource } from '../model/fhir-resource.js';
import type { FhirPathBudget } from './compile-fhirpath.js';
import type { SearchCriterion } from '../search/parse-search-arguments.js';

export interface SearchRequest {
  readonly criteria: readonly SearchCriterion[];
  readonly count?: number;
  readonly offset?: number;
  readonly sort?: string;
  readonly cursor?: string;
  /** Connections report `count`; lists do not, and skip counting. */
  readonly withTotal?: boolean;
}

export interface SearchPage {
  readonly resources: readonly FhirResource[];
  readonly total: number;
  readonly offset: number;
  readonly pageSize: number;
  readonly cursors: {
    readonly first?: string;
    readonly previous?: string;
    readonly next?: string;
    readonly last?: string;
  };
}

export interface FhirDataSource {
  read(resourceType: string, id: string): Promise<FhirResource>;
  search(resourceType: string, request: SearchRequest): Promise<SearchPage>;
  /** Resources of `resourceType` whose reference parameter `code` points to `target`. */
  searchReferring(
    resourceType: string,
    code: string,
    target: FhirResource,
    request: SearchRequest,
  ): Promise<SearchPage>;
  /** The resource a Reference points to, or undefined when it cannot be resolved. */
  resolve(reference: string): Promise<FhirResource | undefined>;
  create(resource: FhirResource): Promise<FhirResource>;
  update(resourceType: string, id: string, resource: FhirResource): Promise<FhirResource>;
  delete(resourceType: string, id: string): Promise<void>;
}

export interface GraphQLContext {
  readonly data: FhirDataSource;
  /** The time the query may still spend evaluating FHIRPath (compile-fhirpath.ts). */
  readonly fhirpath: FhirPathBudget;
  /**
   * Whether resolvers remember which resource holds each object they return (contained.ts).
   * Only `#id` references need it, so queries that resolve no reference skip the cost.
   */
  readonly trackContainers?: boolean;
}

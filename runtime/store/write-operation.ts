/** What a write asks of the store, and what it answers; see ResourceStore.write. */
import type { FhirResource } from '../model/fhir-resource.js';
import type { Queryable } from './database.js';

export type WriteOperation =
  /** `id` is for callers that must know it first (transaction Bundles rewriting `urn:uuid:`); else the store makes one. */
  | { readonly kind: 'create'; readonly resource: FhirResource; readonly id?: string }
  /** Creates the resource with this id when it does not exist (FHIR's update-as-create). */
  | {
      readonly kind: 'update';
      readonly resourceType: string;
      readonly id: string;
      readonly resource: FhirResource;
      readonly ifMatch?: string;
    }
  | {
      readonly kind: 'delete';
      readonly resourceType: string;
      readonly id: string;
      readonly ifMatch?: string;
    };

export interface WriteResult {
  readonly resourceType: string;
  readonly id: string;
  readonly versionId: string;
  readonly lastUpdated: string;
  /** The stored resource; absent for deletes. */
  readonly resource?: FhirResource;
  /** 201 for a new resource, 200 otherwise (also for deleting what was not there). */
  readonly status: 200 | 201;
}

/**
 * A check inside the write transaction, after versions are settled and before anything is
 * stored: it sees the new content of every created or updated resource and throws to refuse.
 */
export type WriteRule = (
  tx: Queryable,
  projectId: string,
  resources: readonly FhirResource[],
) => Promise<void>;

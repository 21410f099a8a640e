/** What a write asks of the store, and what it answers; see ResourceStore.write. */
import type { FhirResource } from '../model/fhir-resource.js';
import type { Queryable, Transaction } from './database.js';

/**
 * Who writes, as their token says (scopes as text). A resource whose work runs later on its
 * writer's behalf keeps it: a Subscription matches and delivers within its author's access.
 */
export interface WriteAuthor {
  readonly clientId: string;
  readonly scope: string;
  readonly admin: boolean;
}

export type WriteOperation =
  /** `id` is for callers that must know it first (transaction Bundles rewriting `urn:uuid:`); else the store makes one. */
  | {
      readonly kind: 'create';
      readonly resource: FhirResource;
      readonly id?: string;
      readonly author?: WriteAuthor;
    }
  /** Creates the resource with this id when it does not exist (FHIR's update-as-create). */
  | {
      readonly kind: 'update';
      readonly resourceType: string;
      readonly id: string;
      readonly resource: FhirResource;
      readonly ifMatch?: string;
      readonly author?: WriteAuthor;
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

/**
 * Settles, before anything touches the database, what the server owns in a created or updated
 * resource that passed validation (a Subscription's status and author), or throws to refuse it;
 * returns the resource to store.
 */
export type WritePreparer = (
  resource: FhirResource,
  author: WriteAuthor | undefined,
) => FhirResource;

/** A version a write stored, and how. */
export interface WrittenVersion {
  readonly resourceType: string;
  readonly id: string;
  readonly versionId: string;
  readonly interaction: 'create' | 'update' | 'delete';
}

/**
 * Runs inside the write transaction once its versions are stored: work the write triggers is
 * enqueued here, so that it exists if and only if the write commits.
 */
export type WriteListener = (
  tx: Transaction,
  projectId: string,
  written: readonly WrittenVersion[],
) => Promise<void>;

/** What the layers above add to every write (ResourceStore's constructor). */
export interface WriteHooks {
  /** Checks inside the write transaction (a Bot's identifier is unique in its project). */
  readonly rules?: readonly WriteRule[];
  /** What the server settles in a resource before it is stored (a Subscription's status). */
  readonly preparers?: readonly WritePreparer[];
}

/**
 * `PUT [base]/[type]?[search]`: update the one resource the search matches; with none, create;
 * with several, 412. The body's id, which it need not have:
 * - with one match, it must be the match's id (else 400);
 * - with none, the resource is created with it (update as create, as R5 spells out and HAPI
 *   does), unless a resource that did not match already has it (409): the condition was meant
 *   to choose the resource, not to overwrite another one. Without an id the server makes one.
 * The search and the write run in one transaction under the condition's lock
 * (search-condition.ts), shared with conditional creates and deletes: however many race, one
 * resource comes of one condition.
 * @see http://hl7.org/fhir/R4/http.html#cond-update
 */
import { randomUUID } from 'node:crypto';
import type { FhirResource } from '../model/fhir-resource.js';
import { FhirError, fhirError } from '../model/fhir-error.js';
import type { Transaction } from '../store/database.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { WriteAuthor, WriteResult } from '../store/write-operation.js';
import { findMatch, lockConditions, type SearchCondition } from './search-condition.js';

export const CONDITIONAL_UPDATE = 'Conditional update';

/** Searches, then updates or creates: the REST interaction and a batch's entry. */
export async function conditionalUpdate(
  store: ResourceStore,
  projectId: string,
  resource: FhirResource,
  condition: SearchCondition,
  ifMatch?: string,
  author?: WriteAuthor,
): Promise<WriteResult> {
  return store.db.transaction(async (tx) => {
    await lockConditions(tx, projectId, [condition]);
    const id = await conditionalUpdateTarget(store, projectId, resource, condition, tx);
    const [result] = await store.write(
      projectId,
      [
        {
          kind: 'update',
          resourceType: condition.resourceType,
          id,
          resource: { ...resource, id },
          ifMatch,
          author,
        },
      ],
      tx,
    );
    return result;
  });
}

/**
 * The id a conditional update writes, in `tx`, whose caller holds the condition's lock: the
 * match's, or for a new resource the body's or a new one.
 */
export async function conditionalUpdateTarget(
  store: ResourceStore,
  projectId: string,
  resource: FhirResource,
  condition: SearchCondition,
  tx: Transaction,
): Promise<string> {
  const match = await findMatch(store.searchSource(tx), projectId, condition, CONDITIONAL_UPDATE);
  const { resourceType } = condition;
  if (match) {
    if (resource.id !== undefined && resource.id !== match.id)
      throw fhirError(
        400,
        'invalid',
        `The resource's id (${resource.id}) is not the id of the ${resourceType} that ${condition.text} matches (${match.id})`,
        `${resourceType}.id`,
      );
    return match.id!;
  }
  if (resource.id === undefined) return randomUUID();
  if (await exists(store, projectId, resourceType, resource.id, tx))
    throw fhirError(
      409,
      'conflict',
      `${resourceType}/${resource.id} exists but does not match ${condition.text}: a conditional update does not overwrite it`,
      `${resourceType}.id`,
    );
  return resource.id;
}

/** Whether the resource exists now (not deleted); its row stays locked, so that it stays so. */
async function exists(
  store: ResourceStore,
  projectId: string,
  resourceType: string,
  id: string,
  tx: Transaction,
): Promise<boolean> {
  try {
    await store.readForUpdate(projectId, resourceType, id, tx);
    return true;
  } catch (thrown) {
    if (thrown instanceof FhirError && (thrown.status === 404 || thrown.status === 410))
      return false;
    throw thrown;
  }
}

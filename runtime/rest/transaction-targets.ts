/**
 * What a transaction's entries write, settled before any of them is written, as FHIR's
 * transaction rules have it: every condition in the Bundle (If-None-Exist too) locked in one
 * order, each conditional update or delete resolved to the resource it writes by a search that
 * sees the database as the transaction found it, and then no two entries writing one resource.
 * @see http://hl7.org/fhir/R4/http.html#trules
 */
import { fhirError } from '../model/fhir-error.js';
import type { Transaction } from '../store/database.js';
import type { ResourceStore } from '../store/resource-store.js';
import {
  isConditional,
  type ConditionalDeleteEntry,
  type ConditionalPutEntry,
  type ParsedEntry,
  type PutEntry,
  type DeleteEntry,
} from './bundle-entry.js';
import { conditionalDeleteTarget } from './conditional-delete.js';
import { conditionalUpdateTarget } from './conditional-update.js';
import { lockConditions, type SearchCondition } from './search-condition.js';

/** Takes the locks of every condition in the entries, in one order. */
export async function lockEntryConditions(
  tx: Transaction,
  projectId: string,
  entries: readonly ParsedEntry[],
): Promise<void> {
  const conditions: SearchCondition[] = entries.flatMap((entry) =>
    isConditional(entry)
      ? [entry.condition]
      : entry.method === 'POST' && entry.ifNoneExist
        ? [entry.ifNoneExist]
        : [],
  );
  await lockConditions(tx, projectId, conditions);
}

/**
 * The entry naming the resource its search found (or, for an update that found none, the one it
 * creates); undefined for a delete that found none.
 */
export async function resolveConditional(
  entry: ConditionalPutEntry | ConditionalDeleteEntry,
  store: ResourceStore,
  projectId: string,
  tx: Transaction,
): Promise<PutEntry | DeleteEntry | undefined> {
  const { resourceType, condition } = entry;
  if (entry.method === 'DELETE') {
    const id = await conditionalDeleteTarget(store, projectId, condition, tx);
    return id === undefined ? undefined : { method: 'DELETE', resourceType, id };
  }
  const id = await conditionalUpdateTarget(store, projectId, entry.resource, condition, tx);
  return {
    method: 'PUT',
    resourceType,
    id,
    resource: { ...entry.resource, id },
    ifMatch: entry.ifMatch,
  };
}

/** 400 when two entries that create, update, patch or delete name one resource. */
export function assertDistinctTargets(entries: readonly ParsedEntry[]): void {
  const seen = new Map<string, number>();
  entries.forEach((entry, index) => {
    if (!('id' in entry)) return;
    const key = `${entry.resourceType}/${entry.id}`;
    const first = seen.get(key);
    if (first !== undefined)
      throw fhirError(
        400,
        'invalid',
        `Bundle.entry[${first}] and Bundle.entry[${index}] both write ${key}: a transaction writes each resource once`,
        `Bundle.entry[${index}]`,
      );
    seen.set(key, index);
  });
}

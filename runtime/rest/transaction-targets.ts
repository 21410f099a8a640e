/**
 * What a transaction's entries write, settled before any of them is written, as FHIR's
 * transaction rules have it: every condition in the Bundle (If-None-Exist too) locked in one
 * order, and each conditional entry resolved by a search that sees the database as the
 * transaction found it — an update or a delete to the resource it writes, a create to the
 * resource it answers with when one matches. transaction-overlap.ts then checks that no two
 * entries name one resource.
 * @see http://hl7.org/fhir/R4/http.html#trules
 */
import type { Transaction } from '../store/database.js';
import type { ResourceStore } from '../store/resource-store.js';
import {
  isConditional,
  type ConditionalDeleteEntry,
  type ConditionalPutEntry,
  type ParsedEntry,
  type PostEntry,
  type PutEntry,
  type DeleteEntry,
} from './bundle-entry.js';
import { conditionalDeleteTarget } from './conditional-delete.js';
import { conditionalUpdateTarget } from './conditional-update.js';
import { findMatch, lockConditions, type SearchCondition } from './search-condition.js';

/** An entry whose search settles what it writes. */
export type ResolvableEntry = ConditionalPutEntry | ConditionalDeleteEntry | PostEntry;

export function isResolvable(entry: ParsedEntry): entry is ResolvableEntry {
  return isConditional(entry) || (entry.method === 'POST' && entry.ifNoneExist !== undefined);
}

export function conditionOf(entry: ResolvableEntry): SearchCondition {
  return entry.method === 'POST' ? entry.ifNoneExist! : entry.condition;
}

/** Takes the locks of every condition in the entries, in one order. */
export async function lockEntryConditions(
  tx: Transaction,
  projectId: string,
  entries: readonly ParsedEntry[],
): Promise<void> {
  await lockConditions(tx, projectId, entries.filter(isResolvable).map(conditionOf));
}

/**
 * The entry naming the resource its search found (or, for an update that found none, the one it
 * creates; for a create that found one, with it as its `match`); undefined for a delete that
 * found none.
 */
export async function resolveConditional(
  entry: ResolvableEntry,
  store: ResourceStore,
  projectId: string,
  tx: Transaction,
): Promise<PutEntry | DeleteEntry | PostEntry | undefined> {
  if (entry.method === 'POST') {
    const match = await findMatch(
      store.searchSource(tx),
      projectId,
      entry.ifNoneExist!,
      'If-None-Exist',
    );
    return match ? { ...entry, id: match.id!, match } : entry;
  }
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

/**
 * `DELETE [base]/[type]?[search]`, in single mode: delete the one resource the search matches;
 * with none, delete nothing and succeed (as deleting an unknown id does); with several, 412 (the
 * spec lets a server delete them all instead; this one asks for a narrower search). The search
 * and the delete run in one transaction under the condition's lock (search-condition.ts).
 * @see http://hl7.org/fhir/R4/http.html#3.1.0.7.1
 */
import type { Transaction } from '../store/database.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { WriteResult } from '../store/write-operation.js';
import { findMatch, lockConditions, type SearchCondition } from './search-condition.js';

export const CONDITIONAL_DELETE = 'Conditional delete';

/** The deletion, or undefined when nothing matched. */
export async function conditionalDelete(
  store: ResourceStore,
  projectId: string,
  condition: SearchCondition,
): Promise<WriteResult | undefined> {
  return store.db.transaction(async (tx) => {
    await lockConditions(tx, projectId, [condition]);
    const id = await conditionalDeleteTarget(store, projectId, condition, tx);
    if (id === undefined) return undefined;
    const [result] = await store.write(
      projectId,
      [{ kind: 'delete', resourceType: condition.resourceType, id }],
      tx,
    );
    return result;
  });
}

/** The id of the one resource to delete, in `tx`, whose caller holds the condition's lock. */
export async function conditionalDeleteTarget(
  store: ResourceStore,
  projectId: string,
  condition: SearchCondition,
  tx: Transaction,
): Promise<string | undefined> {
  return (await findMatch(store.searchSource(tx), projectId, condition, CONDITIONAL_DELETE))?.id;
}

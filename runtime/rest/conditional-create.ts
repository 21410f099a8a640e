/**
 * `If-None-Exist`: create only when no resource matches the query; with one match, answer
 * with it; with several, 412. The search and the create run in one transaction under the
 * condition's lock (search-condition.ts): one resource for one query, however many race.
 * @see http://hl7.org/fhir/R4/http.html#ccreate
 */
import type { FhirResource } from '../model/fhir-resource.js';
import type { Transaction } from '../store/database.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { WriteAuthor, WriteResult } from '../store/write-operation.js';
import { findMatch, lockConditions, type SearchCondition } from './search-condition.js';

export async function conditionalCreate(
  store: ResourceStore,
  projectId: string,
  resource: FhirResource,
  /** If-None-Exist, parsed (parseCondition). */
  condition: SearchCondition,
  tx?: Transaction,
  /** The id to create it with (a transaction's entries already name it); else the store makes one. */
  id?: string,
  author?: WriteAuthor,
): Promise<WriteResult> {
  const run = async (t: Transaction): Promise<WriteResult> => {
    await lockConditions(t, projectId, [condition]);
    const existing = await findMatch(store.searchSource(t), projectId, condition, 'If-None-Exist');
    if (existing) return answerWith(existing);
    return (
      await store.write(projectId, [{ kind: 'create', resource, ...(id ? { id } : {}), author }], t)
    )[0];
  };
  return tx ? run(tx) : store.db.transaction(run);
}

/** A conditional create's answer when its search found `existing`: 200 with it, nothing written. */
export function answerWith(existing: FhirResource): WriteResult {
  const meta = existing.meta as { versionId: string; lastUpdated: string };
  return {
    resourceType: existing.resourceType,
    id: existing.id!,
    versionId: meta.versionId,
    lastUpdated: meta.lastUpdated,
    resource: existing,
    status: 200,
  };
}

/**
 * `If-None-Exist`: create only when no resource matches the query; with one match, answer
 * with it; with several, 412. The search and the create run in one transaction that first takes
 * a lock on the query (its parameters in a canonical order), so that conditional creates of the
 * same query — in any process on the database — run one after the other: one resource for one
 * query, however many race.
 * @see http://hl7.org/fhir/R4/http.html#ccreate
 */
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import type { Transaction } from '../store/database.js';
import type { ResourceStore } from '../store/resource-store.js';
import { lockForTransaction } from '../store/transaction-checks.js';
import type { WriteResult } from '../store/write-operation.js';
import { searchResources, type SearchSource } from '../store/search-store.js';
import { parseSearchRequest, type SearchLimits } from './search-request.js';

export async function conditionalCreate(
  store: ResourceStore,
  projectId: string,
  resource: FhirResource,
  ifNoneExist: string,
  limits: SearchLimits,
  tx?: Transaction,
  /** The id to create it with (a transaction's entries already name it); else the store makes one. */
  id?: string,
): Promise<WriteResult> {
  const query = new URLSearchParams(ifNoneExist.replace(/^.*\?/, ''));
  const run = async (t: Transaction): Promise<WriteResult> => {
    await lockForTransaction(
      t,
      CONDITIONAL_LOCK,
      conditionKey(projectId, resource.resourceType, query),
    );
    const existing = await findExisting(
      store.searchSource(t),
      projectId,
      resource.resourceType,
      query,
      limits,
    );
    if (existing) {
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
    return (
      await store.write(projectId, [{ kind: 'create', resource, ...(id ? { id } : {}) }], t)
    )[0];
  };
  return tx ? run(tx) : store.db.transaction(run);
}

/** Serialises conditional writes of one query (lockForTransaction's lock space). */
const CONDITIONAL_LOCK = 7_215_004;

/** The project, the type and the query's parameters sorted: one key for one condition. */
export function conditionKey(
  projectId: string,
  resourceType: string,
  query: URLSearchParams,
): string {
  const parameters = [...query].map(([name, value]) => `${name}=${value}`).sort();
  return [projectId, resourceType, ...parameters].join('\n');
}

async function findExisting(
  source: SearchSource,
  projectId: string,
  resourceType: string,
  query: URLSearchParams,
  limits: SearchLimits,
): Promise<FhirResource | undefined> {
  const request = parseSearchRequest(resourceType, query, limits);
  if (request.criteria.length === 0)
    throw fhirError(400, 'invalid', 'If-None-Exist needs at least one search parameter');
  const { matches } = await searchResources(source, projectId, resourceType, {
    ...request,
    count: 2,
    offset: 0,
    total: 'none',
    include: [],
    revinclude: [],
  });
  if (matches.length > 1)
    throw fhirError(
      412,
      'duplicate',
      `If-None-Exist: ${decodeURIComponent(query.toString())} matches more than one ${resourceType}`,
    );
  return matches[0];
}

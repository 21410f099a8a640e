/**
 * `If-None-Exist`: create only when no resource matches the query; with one match, answer
 * with it; with several, 412.
 * @see http://hl7.org/fhir/R4/http.html#ccreate
 */
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import type { Transaction } from '../store/database.js';
import type { ResourceStore } from '../store/resource-store.js';
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
  const existing = await findExisting(
    store.searchSource(tx),
    projectId,
    resource.resourceType,
    ifNoneExist,
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
    await store.write(projectId, [{ kind: 'create', resource, ...(id ? { id } : {}) }], tx)
  )[0];
}

async function findExisting(
  source: SearchSource,
  projectId: string,
  resourceType: string,
  query: string,
  limits: SearchLimits,
): Promise<FhirResource | undefined> {
  const parameters = new URLSearchParams(query.replace(/^.*\?/, ''));
  const request = parseSearchRequest(resourceType, parameters, limits);
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
      `If-None-Exist: ${query} matches more than one ${resourceType}`,
    );
  return matches[0];
}

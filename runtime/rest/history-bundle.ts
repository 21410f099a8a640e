/**
 * `GET [base]/[type]/[id]/_history` (a `history` Bundle, newest first, deletions as entries
 * without a resource) and `GET …/_history/[vid]` (410 for a version that is a deletion): for
 * REST and for a bot's `readHistory` and `readVersion`.
 * @see http://hl7.org/fhir/R4/http.html#history
 */
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import type { ResourceStore } from '../store/resource-store.js';

export async function historyBundle(
  store: ResourceStore,
  projectId: string,
  base: string,
  resourceType: string,
  id: string,
): Promise<FhirResource> {
  const versions = await store.history(projectId, resourceType, id);
  return {
    resourceType: 'Bundle',
    type: 'history',
    total: versions.length,
    entry: versions.map((v) => ({
      fullUrl: `${base}/${resourceType}/${id}`,
      ...(v.resource ? { resource: v.resource } : {}),
      request: {
        method: v.deleted ? 'DELETE' : v.versionId === '1' ? 'POST' : 'PUT',
        url: `${resourceType}/${id}`,
      },
      response: {
        status: v.deleted ? '204' : v.versionId === '1' ? '201' : '200',
        etag: `W/"${v.versionId}"`,
        lastModified: v.lastUpdated,
      },
    })),
  };
}

export async function readVersion(
  store: ResourceStore,
  projectId: string,
  resourceType: string,
  id: string,
  vid: string,
): Promise<FhirResource> {
  if (!/^\d{1,18}$/.test(vid)) throw fhirError(404, 'not-found', `Version ${vid} is not known`);
  const [version] = await store.history(projectId, resourceType, id, vid);
  if (version.deleted)
    throw fhirError(
      410,
      'deleted',
      `Version ${version.versionId} of ${resourceType}/${id} is a deletion`,
    );
  return version.resource!;
}

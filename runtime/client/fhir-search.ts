/**
 * Search as MedplumClient does it: the Bundle, the Bundle's resources as an array that keeps the
 * Bundle, the first resource, and pages followed through the Bundle's `next` link.
 */
import type { Bundle, Resource, ResourceType } from '../../generated/types/index.js';
import type { FhirTransport, RequestOptions } from './fhir-transport.js';
import type { ResourceArray, ResourceOf, WithId } from './resource-types.js';
import { toSearchParams, type SearchQuery } from './search-query.js';

/** The page size searchResourcePages asks for when the query sets none (as Medplum does). */
const PAGE_COUNT = '1000';

export function search(
  transport: FhirTransport,
  type: ResourceType,
  query: SearchQuery | undefined,
  options: RequestOptions | undefined,
): Promise<Bundle> {
  const params = toSearchParams(query).toString();
  return transport.fhir('GET', params ? `${type}?${params}` : type, {}, options) as Promise<Bundle>;
}

/**
 * Every entry's resource, in the Bundle's order: the matches, then any `_include`d or
 * `_revinclude`d resources (as Medplum's `bundleToResourceArray`).
 */
export function resourceArray<T extends Resource>(bundle: Bundle): ResourceArray<T> {
  const resources = (bundle.entry ?? []).map((entry) => entry.resource as T);
  return Object.assign(resources, { bundle });
}

export async function searchOne<K extends ResourceType>(
  transport: FhirTransport,
  type: K,
  query: SearchQuery | undefined,
  options: RequestOptions | undefined,
): Promise<WithId<ResourceOf<K>> | undefined> {
  const params = toSearchParams(query);
  params.set('_count', '1');
  const bundle = await search(transport, type, params, options);
  return bundle.entry?.[0]?.resource as WithId<ResourceOf<K>> | undefined;
}

export async function* searchPages<K extends ResourceType>(
  transport: FhirTransport,
  type: K,
  query: SearchQuery | undefined,
  options: RequestOptions | undefined,
): AsyncGenerator<ResourceArray<WithId<ResourceOf<K>>>> {
  let params: URLSearchParams | undefined = toSearchParams(query);
  if (!params.has('_count')) params.set('_count', PAGE_COUNT);
  while (params) {
    const bundle = await search(transport, type, params, options);
    const next = bundle.link?.find((link) => link.relation === 'next')?.url;
    if (!bundle.entry?.length && !next) return;
    yield resourceArray(bundle);
    // The next page is asked for under this client's base, with the link's parameters: the
    // link's own origin may be one the server saw and the client cannot reach (a proxy's).
    params = next ? new URL(next).searchParams : undefined;
  }
}

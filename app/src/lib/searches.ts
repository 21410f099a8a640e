/**
 * Searches the pages share: the server's resource types and their search parameters (from the
 * public CapabilityStatement, read once), and many counts in one request — a batch Bundle of
 * `_summary=count` searches, each entry run as its own search by the server — instead of one
 * request per type.
 */
import type { FhirClient } from './fhir-client.js';
import type { Bundle } from './fhir-types.js';

export interface TypeCapability {
  readonly type: string;
  readonly searchParams: readonly string[];
}

let capabilities: Promise<ReadonlyMap<string, TypeCapability>> | undefined;

export function resourceTypes(client: FhirClient): Promise<ReadonlyMap<string, TypeCapability>> {
  capabilities ??= client
    .json<{
      rest?: { resource?: { type: string; searchParam?: { name: string }[] }[] }[];
    }>('metadata')
    .then(
      ({ body }) =>
        new Map(
          (body.rest?.[0]?.resource ?? []).map((resource) => [
            resource.type,
            {
              type: resource.type,
              searchParams: (resource.searchParam ?? []).map((p) => p.name).sort(),
            },
          ]),
        ),
    );
  capabilities.catch(() => (capabilities = undefined));
  return capabilities;
}

/**
 * The number of matches of each search (`Patient?name=x`), in order; undefined for a search the
 * server refused (a type outside the token's scopes answers 403 in its entry).
 */
export async function countAll(
  client: FhirClient,
  searches: readonly string[],
): Promise<(number | undefined)[]> {
  if (searches.length === 0) return [];
  const { body } = await client.json<Bundle>('', {
    method: 'POST',
    body: {
      resourceType: 'Bundle',
      type: 'batch',
      entry: searches.map((search) => ({
        request: {
          method: 'GET',
          url: `${search}${search.includes('?') ? '&' : '?'}_summary=count`,
        },
      })),
    },
  });
  return searches.map((_, index) => {
    const entry = body.entry?.[index];
    const total = (entry?.resource as Bundle | undefined)?.total;
    return entry?.response?.status.startsWith('200') && typeof total === 'number'
      ? total
      : undefined;
  });
}

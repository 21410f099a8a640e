/** The Bot an identifier names in a project, for `$execute?identifier=` and `fhir.executeBot`. */
import { fhirError } from '../model/fhir-error.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { parseSearchRequest, type SearchLimits } from '../rest/search-request.js';
import type { ResourceStore } from '../store/resource-store.js';
import { searchResources } from '../store/search-store.js';

/** `identifier` is `system|value` or a bare value; 404 when none, 409 when several match. */
export async function botByIdentifier(
  store: ResourceStore,
  projectId: string,
  identifier: string,
  limits: SearchLimits,
): Promise<FhirResource> {
  const request = parseSearchRequest('Bot', new URLSearchParams({ identifier }), limits);
  const { matches } = await searchResources(store.searchSource(), projectId, 'Bot', {
    ...request,
    count: 10,
    total: 'none',
  });
  if (matches.length === 0)
    throw fhirError(404, 'not-found', `No Bot has the identifier ${identifier}`);
  // A value without a system can match Bots of several systems: never run one at random.
  if (matches.length > 1)
    throw fhirError(
      409,
      'duplicate',
      `The identifier ${identifier} names more than one Bot (${matches.map((bot) => `Bot/${bot.id}`).join(', ')}): give its system too`,
    );
  return matches[0];
}

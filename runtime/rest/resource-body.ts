import { fhirError } from '../model/fhir-error.js';
import type { FhirResource } from '../model/fhir-resource.js';

/**
 * A request body for `[type]` (create, update): a JSON object whose resourceType is that type;
 * else 400, as REST and a bot's `fhir.post`/`put` answer it.
 */
export function resourceBodyFor(type: string, body: unknown): FhirResource {
  const resource = body as FhirResource;
  if (typeof resource !== 'object' || resource === null || Array.isArray(resource))
    throw fhirError(400, 'structure', 'The body must be a JSON object');
  if (resource.resourceType !== type)
    throw fhirError(
      400,
      'invalid',
      `The body's resourceType (${String(resource.resourceType ?? 'missing')}) must be ${type}`,
      'resourceType',
    );
  return resource;
}

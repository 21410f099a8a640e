import { fhirError } from '../model/fhir-error.js';
import type { Interaction } from './scopes.js';
import type { AccessClaims } from './token-service.js';

/** 403 unless the token's scopes allow `interaction` on `resourceType`. */
export function authorize(
  access: AccessClaims,
  resourceType: string,
  interaction: Interaction,
): void {
  if (!access.scopes.allows(resourceType, interaction)) {
    const names = { c: 'create', r: 'read', u: 'update', d: 'delete', s: 'search' } as const;
    throw fhirError(
      403,
      'forbidden',
      `The token's scopes do not allow ${names[interaction]} on ${resourceType} (scopes: ${access.scopes || 'none'})`,
    );
  }
}

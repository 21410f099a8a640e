import { fhirError } from '../model/fhir-error.js';
import { EXECUTE, EXECUTE_SCOPE, Scopes, type Interaction } from './scopes.js';
import type { AccessClaims } from './token-service.js';

/** Writing a Bot sets code that runs with its own access and reads the project's secrets. */
const ADMIN_WRITES: ReadonlySet<string> = new Set(['Bot']);
const WRITES: ReadonlySet<Interaction> = new Set(['c', 'u', 'd']);
const RUN_BOTS = Scopes.parse(EXECUTE_SCOPE);

/**
 * 403 unless the token's scopes allow `interaction` on `resourceType`; creating, updating and
 * deleting a Bot also need the project's admin rights. Every REST, Bundle, GraphQL and bot host
 * interaction passes here with the caller's access, so no path writes a Bot without them (a
 * bot's own access is never admin).
 */
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
  if (ADMIN_WRITES.has(resourceType) && WRITES.has(interaction) && !access.admin) {
    throw fhirError(
      403,
      'forbidden',
      `Creating, updating or deleting a ${resourceType} needs the project's admin rights: its code runs with its own access and reads the project's secrets`,
    );
  }
}

/** 403 unless the token may run bots: read access to Bot, and the execute permission. */
export function authorizeExecute(access: AccessClaims): void {
  authorize(access, 'Bot', 'r');
  if (!grantOf(access).allows('Bot', EXECUTE)) {
    throw fhirError(
      403,
      'forbidden',
      `Running a bot needs the scope ${EXECUTE_SCOPE} or the project's admin rights (scopes: ${access.scopes || 'none'})`,
    );
  }
}

/**
 * What a client or token may do, and so ask for or pass on: its scopes, and for an admin also
 * running bots — an admin may write any Bot's code, so running one grants nothing more.
 */
export function grantOf(holder: { readonly scopes: Scopes; readonly admin: boolean }): Scopes {
  return holder.admin ? holder.scopes.union(RUN_BOTS) : holder.scopes;
}

/**
 * A bot's own access: what its `fhir` client may do. `Bot.scope` (SMART scopes; absent: read
 * and write of every resource type of the project) and, with `Bot.runAsUser`, only what its
 * caller may do too. Never admin, so a bot writes no Bot, whoever runs it.
 */
import { fhirError } from '../model/fhir-error.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { grantOf } from './authorize.js';
import { FULL_ACCESS } from './client-registry.js';
import { ScopeError, Scopes } from './scopes.js';
import type { AccessClaims } from './token-service.js';

/**
 * A Bot without `scope` reads and writes the project's resources and runs its other bots
 * (`fhir.executeBot`), as Medplum's bots do by default; only an admin writes those bots.
 */
const DEFAULT_SCOPES = Scopes.parse(`${FULL_ACCESS} system/Bot.$execute`);

export function botAccess(bot: FhirResource, caller: AccessClaims): AccessClaims {
  const own = botScopes(bot);
  return {
    clientId: `Bot/${bot.id}`,
    ...(caller.projectId ? { projectId: caller.projectId } : {}),
    scopes: bot.runAsUser === true ? own.intersect(grantOf(caller)) : own,
    admin: false,
    // Bounded by the execution's time limit, not by a token's lifetime.
    expires: Infinity,
  };
}

/**
 * The scopes `Bot.scope` names. Writes refuse a scope that does not parse (bot-scope-rule.ts);
 * a Bot stored before that check with one does not run (400) rather than run with a guess.
 */
function botScopes(bot: FhirResource): Scopes {
  if (bot.scope === undefined) return DEFAULT_SCOPES;
  try {
    return Scopes.parse(String(bot.scope));
  } catch (error) {
    throw fhirError(
      400,
      'invalid',
      `Bot/${bot.id} has a scope that does not parse: ${(error as ScopeError).message}`,
      'Bot.scope',
    );
  }
}

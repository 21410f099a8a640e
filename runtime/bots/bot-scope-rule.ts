/**
 * A Bot's `scope` is the access it runs with (runtime/access/bot-access.ts): SMART scopes that
 * parse and name resource types this server knows, or the Bot is refused (400) when written,
 * not when it first runs.
 */
import { searchableTypes } from '../../generated/search/index.js';
import { ScopeError, Scopes } from '../access/scopes.js';
import { fhirError } from '../model/fhir-error.js';
import type { WriteRule } from '../store/write-operation.js';

export const botScopeRule: WriteRule = async (_tx, _projectId, resources) => {
  for (const bot of resources) {
    if (bot.resourceType !== 'Bot' || bot.scope === undefined) continue;
    let scopes: Scopes;
    try {
      scopes = Scopes.parse(String(bot.scope));
    } catch (error) {
      throw invalid(`Bot.scope: ${(error as ScopeError).message}`);
    }
    const unknown = scopes.types().filter((type) => !searchableTypes.has(type));
    if (unknown.length > 0)
      throw invalid(`Bot.scope: ${unknown.join(', ')} is not a resource type`);
  }
};

function invalid(message: string) {
  return fhirError(400, 'invalid', message, 'Bot.scope');
}

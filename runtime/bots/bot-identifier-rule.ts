/**
 * An identifier names at most one Bot per project (so `Bot/$execute?identifier=` is
 * unambiguous); the same identifier may name one Bot in each of several projects. A second Bot
 * with an identifier already taken in the project is refused with 409.
 */
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import { lockForTransaction, tokenOwner } from '../store/transaction-checks.js';
import type { WriteRule } from '../store/write-operation.js';

/** Serializes Bot writes per project, so two concurrent writes cannot both take one identifier. */
const BOT_LOCK = 7_215_003;

export const botIdentifierRule: WriteRule = async (tx, projectId, resources) => {
  const bots = resources.filter((r) => r.resourceType === 'Bot');
  if (bots.length === 0) return;
  await lockForTransaction(tx, BOT_LOCK, projectId);
  const claimed = new Map<string, string>();
  for (const bot of bots) {
    for (const identifier of identifiersOf(bot)) {
      const key = `${identifier.system ?? ''}|${identifier.value}`;
      const other =
        claimed.get(key) ??
        (await tokenOwner(tx, projectId, 'Bot', 'identifier', identifier, bot.id!));
      if (other && other !== bot.id) {
        throw fhirError(
          409,
          'duplicate',
          `Bot/${other} already has the identifier ${key} in this project`,
          'Bot.identifier',
        );
      }
      claimed.set(key, bot.id!);
    }
  }
};

function identifiersOf(bot: FhirResource): { system?: string; value: string }[] {
  const list = (bot.identifier ?? []) as { system?: string; value?: string }[];
  return list.filter((i): i is { system?: string; value: string } => typeof i.value === 'string');
}

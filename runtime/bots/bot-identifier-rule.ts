/**
 * An identifier names at most one Bot per project (so `Bot/$execute?identifier=` is
 * unambiguous); the same identifier may name one Bot in each of several projects. A second Bot
 * with an identifier already taken in the project is refused with 409.
 */
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import type { Queryable } from '../store/database.js';
import type { WriteRule } from '../store/write-operation.js';

/** Serializes Bot writes per project, so two concurrent writes cannot both take one identifier. */
const BOT_LOCK = 7_215_003;

export const botIdentifierRule: WriteRule = async (tx, projectId, resources) => {
  const bots = resources.filter((r) => r.resourceType === 'Bot');
  if (bots.length === 0) return;
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [BOT_LOCK, projectId]);
  const claimed = new Map<string, string>();
  for (const bot of bots) {
    for (const identifier of identifiersOf(bot)) {
      const key = `${identifier.system ?? ''}|${identifier.value}`;
      const other = claimed.get(key) ?? (await ownerOf(tx, projectId, identifier, bot.id!));
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

async function ownerOf(
  tx: Queryable,
  projectId: string,
  identifier: { system?: string; value: string },
  except: string,
): Promise<string | undefined> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM search_token
      WHERE project_id = $1 AND resource_type = 'Bot' AND code = 'identifier' AND value = $2
        AND system IS NOT DISTINCT FROM $3 AND id <> $4
      LIMIT 1`,
    [projectId, identifier.value, identifier.system ?? null, except],
  );
  return rows[0]?.id;
}

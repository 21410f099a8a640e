/**
 * What write rules (ResourceStore's `rules`) ask of the database inside a write's transaction:
 * a lock that serialises the writes of one kind, and which resource holds a token value.
 */
import type { Queryable } from './database.js';

/**
 * Waits until no other transaction holds the lock (`lockSpace`, `key`), then holds it until this
 * one ends; every process on the database sees it.
 */
export async function lockForTransaction(
  tx: Queryable,
  lockSpace: number,
  key: string,
): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [lockSpace, key]);
}

/**
 * The id of a resource of `resourceType` in the project, other than `except`, whose token
 * parameter `code` has exactly this system (or none) and value.
 */
export async function tokenOwner(
  tx: Queryable,
  projectId: string,
  resourceType: string,
  code: string,
  token: { readonly system?: string; readonly value: string },
  except: string,
): Promise<string | undefined> {
  const { rows } = await tx.query<{ id: string }>(
    `SELECT id FROM search_token
      WHERE project_id = $1 AND resource_type = $2 AND code = $3 AND value = $4
        AND system IS NOT DISTINCT FROM $5 AND id <> $6
      LIMIT 1`,
    [projectId, resourceType, code, token.value, token.system ?? null, except],
  );
  return rows[0]?.id;
}

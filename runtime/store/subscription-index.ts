/**
 * What Subscriptions (runtime/subscriptions/) ask of the database: which criteria the project's
 * active Subscriptions have, read from the search index every write keeps (no table of their
 * own to keep in step); and a search as if a past version were current, for matching a version
 * a later write or a delete has replaced.
 */
import type { FhirResource } from '../model/fhir-resource.js';
import { loadSearchDefinition } from '../../generated/search/index.js';
import { extractSearchIndex } from '../search/extract-search-index.js';
import type { Database, Queryable, Transaction } from './database.js';
import { searchIndexWrites } from './search-index-writer.js';

/**
 * The `criteria` of the project's active Subscriptions, lower-cased as the index keeps them: one
 * indexed lookup, inside a write's transaction, so that a Subscription another process committed
 * before it counts. Usually none.
 */
export async function activeSubscriptionCriteria(
  tx: Queryable,
  projectId: string,
): Promise<string[]> {
  const { rows } = await tx.query<{ value: string }>(
    `SELECT s.value FROM search_token t
       JOIN search_string s ON s.project_id = t.project_id AND s.resource_type = t.resource_type
        AND s.id = t.id AND s.code = 'criteria'
      WHERE t.project_id = $1 AND t.resource_type = 'Subscription' AND t.code = 'status'
        AND t.value = 'active'`,
    [projectId],
    { prepared: 'recurring' },
  );
  return rows.map((row) => row.value);
}

/** Thrown to roll the staging transaction back once its work is done. */
class Unstaged extends Error {}

/**
 * Runs `work` in a transaction where `version` (the current version of a resource, a past one,
 * or the one before its deletion) is the current one, with its search index, then rolls
 * everything back: a search in `work` sees the project as it was, this resource at that version.
 * The resource's row is locked first and throughout (writes of it wait a few milliseconds), so a
 * write cannot replace the version between the check and the search; a version still current is
 * searched as it is, a replaced one is made current again, which no other session sees (PGlite
 * runs nothing else during a transaction).
 */
export async function withVersionCurrent<T>(
  db: Database,
  projectId: string,
  version: FhirResource,
  work: (tx: Transaction) => Promise<T>,
): Promise<T> {
  const resourceType = version.resourceType;
  const id = version.id!;
  const versionId = Number((version.meta as { versionId?: string } | undefined)?.versionId);
  const lastUpdated = String((version.meta as { lastUpdated?: string } | undefined)?.lastUpdated);
  let result: T | undefined;
  try {
    await db.transaction(async (tx) => {
      const content = JSON.stringify(version);
      const values: unknown[] = [projectId, resourceType, id, versionId, lastUpdated, content];
      const index = searchIndexWrites(
        '$1',
        lastUpdated,
        [
          {
            resourceType,
            id,
            versionId,
            replacing: true,
            index: extractSearchIndex(version, loadSearchDefinition(resourceType)),
          },
        ],
        values,
      );
      // The row first, as writes take it (write-versions.ts): the statement below changes the
      // row and the index rows in no fixed order, and a write of the resource that held the row
      // while this held its index rows would deadlock with it.
      const { rows } = await tx.query<{ version_id: number | string; deleted: boolean }>(
        'SELECT version_id, deleted FROM resource WHERE project_id = $1 AND resource_type = $2 AND id = $3 FOR UPDATE',
        [projectId, resourceType, id],
      );
      const current = rows[0] && !rows[0].deleted && Number(rows[0].version_id) === versionId;
      if (!current)
        await tx.query(
          `WITH current AS (
           UPDATE resource SET version_id = $4, last_updated = $5::timestamptz, deleted = false, content = $6::jsonb
            WHERE project_id = $1 AND resource_type = $2 AND id = $3
         )
         ${index.map((cte) => `, ${cte}`).join('\n         ')}
         SELECT 1`,
          values,
        );
      result = await work(tx);
      throw new Unstaged();
    });
  } catch (error) {
    if (!(error instanceof Unstaged)) throw error;
  }
  return result as T;
}

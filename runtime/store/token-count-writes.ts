/**
 * The deltas of the kept token counts (migrations/014) that one write statement makes, from the
 * token index rows it deletes and inserts: data-modifying CTEs for the statement of
 * search-index-writer.ts, so that the counts change in the same statement, and so the same
 * transaction, as the index rows they count. Every reader sees both or neither.
 */

/** The columns the token index CTEs return for the counts (`RETURNING …`). */
export const COUNTED_COLUMNS = 'resource_type, id, code, system, value';

/**
 * `token_keys AS (…), count_token AS (INSERT INTO search_token_count …)`: one row per key whose
 * count the statement changes, the sum over its resources, from CTE `deleted` (the replaced
 * resources' old rows, −1) and CTE `inserted` (the new rows, +1), either absent. `project` is
 * the project id's parameter.
 *
 * A resource counts once per key however many rows it has for it (its keys are made distinct
 * first). An update that keeps a value deletes and inserts it: −1 and +1 make 0, and no row is
 * written. So a Bundle of 480 resources adds a row per key its resources changed, not per resource.
 */
export function tokenCountDeltas(
  project: string,
  { deleted, inserted }: { readonly deleted?: string; readonly inserted?: string },
): string[] {
  const changes = [
    ...(inserted ? [`SELECT ${COUNTED_COLUMNS}, 1 AS change FROM ${inserted}`] : []),
    ...(deleted ? [`SELECT ${COUNTED_COLUMNS}, -1 AS change FROM ${deleted}`] : []),
  ];
  if (changes.length === 0) return [];
  return [
    // Each resource's keys once, with +1 or −1 (a resource replaced by itself has both).
    `token_keys AS (
       SELECT DISTINCT resource_type, id, code, value, system, change
       FROM (${changes.join(' UNION ALL ')}) c WHERE value IS NOT NULL
     )`,
    // A resource with the value in n systems is in n system rows: its any-system row takes n − 1 off.
    `count_token AS (
       INSERT INTO search_token_count (project_id, resource_type, code, value, any_system, system, delta)
       SELECT ${project}::text, resource_type, code, value, any_system, system, sum(change)
       FROM (
         SELECT resource_type, code, value, false AS any_system, system, change FROM token_keys
         UNION ALL
         SELECT resource_type, code, value, true, NULL::text, (1 - count(*)) * change FROM token_keys
         GROUP BY resource_type, id, code, value, change HAVING count(*) > 1
       ) k
       GROUP BY resource_type, code, value, any_system, system
       HAVING sum(change) <> 0
     )`,
  ];
}

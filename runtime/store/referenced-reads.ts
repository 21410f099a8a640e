/**
 * The resources one resource references, read through its search index rather than its content:
 * a GraphQL query that reads `DiagnosticReport(id:)` and resolves its `result` references can send
 * this beside the read itself, instead of waiting for the report to know which Observations to
 * read (one round trip to PostgreSQL instead of two). The index rows of a reference parameter
 * hold the target's type and id for every literal reference (`Type/id`) in the parameter's
 * element, written in the same statement as the version they index.
 */
import type { FhirResource } from '../graphql/graphql-context.js';
import type { Queryable } from './database.js';
import { resourceKey } from './resource-keys.js';

/**
 * At most this many targets are read ahead; a resource that references more (a List, a large
 * Bundle-like report) has the rest read when they are resolved, as without the read ahead.
 */
export const MAX_REFERENCED = 100;

/**
 * The current, non-deleted resources that `sourceType/sourceId` references through the reference
 * search parameters `codes`, in its project, by `resourceKey`.
 */
export async function readReferenced(
  db: Queryable,
  projectId: string,
  sourceType: string,
  sourceId: string,
  codes: readonly string[],
): Promise<Map<string, FhirResource>> {
  const { rows } = await db.query<{ resource_type: string; id: string; content: FhirResource }>(
    `SELECT r.resource_type, r.id, r.content FROM resource r
      JOIN (SELECT DISTINCT i.target_type, i.target_id FROM search_reference i
             WHERE i.project_id = $1 AND i.resource_type = $2 AND i.id = $3
               AND i.code = ANY($4::text[]) AND i.target_type IS NOT NULL
             LIMIT ${MAX_REFERENCED}) t
        ON r.resource_type = t.target_type AND r.id = t.target_id
     WHERE r.project_id = $1 AND NOT r.deleted`,
    [projectId, sourceType, sourceId, codes],
    { prepared: 'fixed' },
  );
  return new Map(rows.map((row) => [resourceKey(row.resource_type, row.id), row.content]));
}

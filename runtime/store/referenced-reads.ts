/**
 * The resources one resource references, read through its search index rather than its content:
 * a GraphQL query that reads `DiagnosticReport(id:)` and resolves its `result` references can send
 * this beside the read itself, instead of waiting for the report to know which Observations to
 * read (one round trip to PostgreSQL instead of two). The index rows of a reference parameter
 * hold the target's type and id for every literal reference (`Type/id`) in the parameter's
 * element, written in the same statement as the version they index.
 *
 * As current-reads.ts does for reads by id, the reads asked for in one turn of the event loop go
 * to the database together, one statement per project and set of parameters: under load, one
 * statement each made a query at concurrency 16 a quarter slower than without reading ahead.
 */
import type { FhirResource } from '../graphql/graphql-context.js';
import type { Queryable } from './database.js';
import { listedPadded, resourceKey } from './resource-keys.js';

/**
 * At most this many targets of one resource are read ahead; a resource that references more (a
 * List, say) has the rest read when they are resolved, as without the read ahead.
 */
export const MAX_REFERENCED = 100;

interface Waiting {
  readonly source: string;
  resolve(found: Map<string, FhirResource>): void;
}

interface Group {
  readonly projectId: string;
  readonly codes: readonly string[];
  readonly sources: Map<string, { resourceType: string; id: string }>;
  readonly waiting: Waiting[];
}

export class ReferencedReads {
  private groups = new Map<string, Group>();
  private scheduled = false;

  constructor(private readonly db: Queryable) {}

  /**
   * The current, non-deleted resources that `sourceType/sourceId` references through the
   * reference search parameters `codes`, in its project, by `resourceKey`. Never rejects: when
   * the statement fails, nothing was read ahead.
   */
  read(
    projectId: string,
    sourceType: string,
    sourceId: string,
    codes: readonly string[],
  ): Promise<Map<string, FhirResource>> {
    const key = `${projectId}\n${codes.join('\n')}`;
    let group = this.groups.get(key);
    if (!group)
      this.groups.set(key, (group = { projectId, codes, sources: new Map(), waiting: [] }));
    const source = resourceKey(sourceType, sourceId);
    group.sources.set(source, { resourceType: sourceType, id: sourceId });
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return new Promise((resolve) => group.waiting.push({ source, resolve }));
  }

  private flush(): void {
    const groups = this.groups;
    this.groups = new Map();
    this.scheduled = false;
    for (const group of groups.values()) void this.load(group);
  }

  private async load({ projectId, codes, sources, waiting }: Group): Promise<void> {
    const bySource = new Map<string, Map<string, FhirResource>>();
    // The sources as a list of parameters, padded as resource-keys.ts pads ids: as an array,
    // PostgreSQL estimated their unnest at 10 rows, so the kept plan looked costlier than one
    // planned for the actual sources, and it planned every run anew (bench Q4 0.66 → 0.80 ms).
    const values: unknown[] = [projectId, codes];
    const all = [...sources.values()];
    const param = (value: unknown, type: string) => `$${values.push(value)}::${type}`;
    const listed = listedPadded(all);
    const from = listed
      ? `(VALUES ${listed.map((s) => `(${param(s.resourceType, 'text')}, ${param(s.id, 'text')})`).join(', ')})`
      : `unnest(${param(
          all.map((s) => s.resourceType),
          'text[]',
        )}, ${param(
          all.map((s) => s.id),
          'text[]',
        )})`;
    try {
      const { rows } = await this.db.query<{
        source_type: string;
        source_id: string;
        resource_type: string;
        id: string;
        content: FhirResource;
      }>(
        `SELECT t.source_type, t.source_id, r.resource_type, r.id, r.content
           FROM ${from} AS s(resource_type, id)
          CROSS JOIN LATERAL (
                SELECT DISTINCT i.resource_type AS source_type, i.id AS source_id,
                       i.target_type, i.target_id
                  FROM search_reference i
                 WHERE i.project_id = $1 AND i.resource_type = s.resource_type AND i.id = s.id
                   AND i.code = ANY($2::text[]) AND i.target_type IS NOT NULL
                 LIMIT ${MAX_REFERENCED}) t
           JOIN resource r
             ON r.project_id = $1 AND r.resource_type = t.target_type AND r.id = t.target_id
          WHERE NOT r.deleted`,
        values,
        { prepared: 'fixed' },
      );
      for (const row of rows) {
        const source = resourceKey(row.source_type, row.source_id);
        let found = bySource.get(source);
        if (!found) bySource.set(source, (found = new Map()));
        found.set(resourceKey(row.resource_type, row.id), row.content);
      }
    } catch {
      // Nothing read ahead: each reference is read when it is resolved.
    }
    for (const { source, resolve } of waiting) resolve(bySource.get(source) ?? new Map());
  }
}

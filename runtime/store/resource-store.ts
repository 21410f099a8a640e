/**
 * Resources with their versions: reads, history, and writes. Every write — one REST call or a
 * whole transaction Bundle — goes through `write`, which validates, versions, stores the JSON,
 * the history row and the search index in a fixed number of SQL statements in one transaction.
 * @see http://hl7.org/fhir/R4/http.html
 */
import { randomUUID } from 'node:crypto';
import { loadDefinitionRegistry } from '../../generated/definitions/index.js';
import { loadSearchDefinition } from '../../generated/search/index.js';
import type { FhirResource } from '../graphql/graphql-context.js';
import { fhirError } from '../http/fhir-error.js';
import { extractSearchIndex } from '../search/extract-search-index.js';
import { parseResource } from '../validation/validate-resource.js';
import type { Database, Queryable } from './database.js';
import { replaceSearchIndex } from './search-index-writer.js';
import { StatisticsKeeper } from './statistics.js';

/** About how many rows (resource, history, search index) one resource version writes. */
const ROWS_PER_RESOURCE = 12;

export type WriteOperation =
  /** `id` is for callers that must know it first (transaction Bundles rewriting `urn:uuid:`); else the store makes one. */
  | { readonly kind: 'create'; readonly resource: FhirResource; readonly id?: string }
  /** Creates the resource with this id when it does not exist (FHIR's update-as-create). */
  | {
      readonly kind: 'update';
      readonly resourceType: string;
      readonly id: string;
      readonly resource: FhirResource;
      readonly ifMatch?: string;
    }
  | {
      readonly kind: 'delete';
      readonly resourceType: string;
      readonly id: string;
      readonly ifMatch?: string;
    };

export interface WriteResult {
  readonly resourceType: string;
  readonly id: string;
  readonly versionId: string;
  readonly lastUpdated: string;
  /** The stored resource; absent for deletes. */
  readonly resource?: FhirResource;
  /** 201 for a new resource, 200 otherwise (also for deleting what was not there). */
  readonly status: 200 | 201;
}

export interface StoredVersion {
  readonly versionId: string;
  readonly lastUpdated: string;
  readonly deleted: boolean;
  readonly resource?: FhirResource;
}

interface CurrentRow {
  resource_type: string;
  id: string;
  version_id: string | number;
  deleted: boolean;
}

export class ResourceStore {
  readonly statistics: StatisticsKeeper;

  /** `rules`: checks every write must pass inside its transaction (a Bot's identifier is unique in its project). */
  constructor(
    readonly db: Database,
    private readonly rules: readonly WriteRule[] = [],
  ) {
    this.statistics = new StatisticsKeeper(db);
  }

  /** The current version; 404 when unknown (also another project's), 410 when deleted. */
  async read(
    projectId: string,
    resourceType: string,
    id: string,
    tx: Queryable = this.db,
  ): Promise<FhirResource> {
    const { rows } = await tx.query<{
      deleted: boolean;
      content: FhirResource | null;
      version_id: string;
    }>(
      'SELECT deleted, content, version_id FROM resource WHERE project_id = $1 AND resource_type = $2 AND id = $3',
      [projectId, resourceType, id],
    );
    const row = rows[0];
    if (!row) throw fhirError(404, 'not-found', `${resourceType}/${id} is not known`);
    if (row.deleted)
      throw fhirError(
        410,
        'deleted',
        `${resourceType}/${id} was deleted (version ${row.version_id})`,
      );
    return row.content!;
  }

  /** Current, non-deleted versions of several resources in one statement; missing ones are absent. */
  async readMany(
    projectId: string,
    keys: readonly { resourceType: string; id: string }[],
  ): Promise<Map<string, FhirResource>> {
    if (keys.length === 0) return new Map();
    const { rows } = await this.db.query<{ content: FhirResource }>(
      `SELECT r.content FROM resource r JOIN jsonb_to_recordset($2::jsonb) AS k(t text, i text) ON r.resource_type = k.t AND r.id = k.i
        WHERE r.project_id = $1 AND r.deleted = false`,
      [projectId, JSON.stringify(keys.map((k) => ({ t: k.resourceType, i: k.id })))],
    );
    return new Map(
      rows.map((row) => [key(row.content.resourceType, row.content.id!), row.content]),
    );
  }

  /** Every version, newest first; 404 when the resource never existed. */
  async history(
    projectId: string,
    resourceType: string,
    id: string,
    versionId?: string,
  ): Promise<StoredVersion[]> {
    const { rows } = await this.db.query<{
      version_id: string;
      last_updated: Date | string;
      deleted: boolean;
      content: FhirResource | null;
    }>(
      `SELECT version_id, last_updated, deleted, content FROM resource_history
       WHERE project_id = $1 AND resource_type = $2 AND id = $3 AND ($4::bigint IS NULL OR version_id = $4::bigint)
       ORDER BY version_id DESC`,
      [projectId, resourceType, id, versionId ?? null],
    );
    if (rows.length === 0) {
      const what = versionId
        ? `Version ${versionId} of ${resourceType}/${id}`
        : `${resourceType}/${id}`;
      throw fhirError(404, 'not-found', `${what} is not known`);
    }
    return rows.map((row) => ({
      versionId: String(row.version_id),
      lastUpdated: new Date(row.last_updated).toISOString(),
      deleted: row.deleted,
      ...(row.content ? { resource: row.content } : {}),
    }));
  }

  /** Writes all operations in one transaction (or in `tx`, when the caller holds one). */
  async write(
    projectId: string,
    operations: readonly WriteOperation[],
    tx?: Queryable,
  ): Promise<WriteResult[]> {
    const prepared = operations.map((operation, index) => {
      try {
        return prepare(operation);
      } catch (error) {
        throw operations.length > 1 ? new WriteOperationError(index, error) : error;
      }
    });
    const results = await (tx
      ? writeAll(tx, projectId, prepared, this.rules)
      : this.db.transaction((t) => writeAll(t, projectId, prepared, this.rules)));
    // Counted when the caller's transaction is still open too: an ANALYZE that runs before its
    // commit only sees older rows, and the next write brings the statistics up to date.
    this.statistics.written(results.length * ROWS_PER_RESOURCE);
    return results;
  }
}

/**
 * A check inside the write transaction, after versions are settled and before anything is
 * stored: it sees the new content of every created or updated resource and throws to refuse.
 */
export type WriteRule = (
  tx: Queryable,
  projectId: string,
  resources: readonly FhirResource[],
) => Promise<void>;

/** Which of several operations was refused, so that a Bundle can name its entry. */
export class WriteOperationError extends Error {
  constructor(
    readonly index: number,
    readonly reason: unknown,
  ) {
    super(reason instanceof Error ? reason.message : String(reason));
  }
}

interface PreparedWrite {
  readonly operation: WriteOperation;
  readonly resourceType: string;
  readonly id: string;
}

/** Validates the resource and settles its id before anything touches the database. */
function prepare(operation: WriteOperation): PreparedWrite {
  if (operation.kind === 'delete')
    return { operation, resourceType: operation.resourceType, id: operation.id };
  const expectedType =
    operation.kind === 'update' ? operation.resourceType : operation.resource.resourceType;
  parseResource(operation.resource, loadDefinitionRegistry(), { expectedType });
  if (operation.kind === 'update' && operation.resource.id !== operation.id) {
    throw fhirError(
      400,
      'invalid',
      `The resource's id (${operation.resource.id ?? 'none'}) must equal the id in the URL (${operation.id})`,
      `${expectedType}.id`,
    );
  }
  return {
    operation,
    resourceType: expectedType,
    id: operation.kind === 'create' ? (operation.id ?? randomUUID()) : operation.id,
  };
}

async function writeAll(
  tx: Queryable,
  projectId: string,
  writes: readonly PreparedWrite[],
  rules: readonly WriteRule[],
): Promise<WriteResult[]> {
  assertDistinct(writes);
  const current = await lockCurrent(
    tx,
    projectId,
    writes.filter((w) => w.operation.kind !== 'create'),
  );
  const lastUpdated = new Date().toISOString();
  const results: WriteResult[] = [];
  const rows: VersionRow[] = [];
  for (const write of writes) {
    const existing = current.get(key(write.resourceType, write.id));
    const result = nextVersion(write, existing, lastUpdated);
    results.push(result);
    // Deleting what is not there, or no longer there, writes nothing.
    const changed = result.resource !== undefined || (existing !== undefined && !existing.deleted);
    if (changed) {
      rows.push({
        project_id: projectId,
        resource_type: write.resourceType,
        id: write.id,
        version_id: Number(result.versionId),
        last_updated: lastUpdated,
        deleted: !result.resource,
        content: result.resource ?? null,
        previous: existing ? Number(existing.version_id) : null,
      });
    }
  }
  if (rows.length === 0) return results;
  for (const rule of rules)
    await rule(
      tx,
      projectId,
      rows.filter((r) => r.content).map((r) => r.content!),
    );
  await storeVersions(tx, rows);
  await replaceSearchIndex(
    tx,
    projectId,
    rows.map((row) => ({
      resourceType: row.resource_type,
      id: row.id,
      replacing: row.previous !== null,
      index: row.content
        ? extractSearchIndex(row.content, loadSearchDefinition(row.resource_type))
        : undefined,
    })),
  );
  return results;
}

function nextVersion(
  write: PreparedWrite,
  existing: CurrentRow | undefined,
  lastUpdated: string,
): WriteResult {
  const { operation, resourceType, id } = write;
  const currentVersion = existing ? Number(existing.version_id) : 0;
  if ('ifMatch' in operation && operation.ifMatch !== undefined) {
    const wanted = parseETag(operation.ifMatch);
    if (!existing || existing.deleted || wanted !== String(currentVersion)) {
      throw fhirError(
        412,
        'conflict',
        `If-Match ${operation.ifMatch} does not match ${resourceType}/${id}, whose version is ${existing && !existing.deleted ? currentVersion : 'none'}`,
      );
    }
  }
  if (operation.kind === 'delete') {
    // Deleting what is not there (or no longer there) succeeds and changes nothing.
    if (!existing || existing.deleted)
      return { resourceType, id, versionId: String(currentVersion), lastUpdated, status: 200 };
    return { resourceType, id, versionId: String(currentVersion + 1), lastUpdated, status: 200 };
  }
  const versionId = String(currentVersion + 1);
  const resource = {
    ...operation.resource,
    id,
    meta: { ...(operation.resource.meta as object | undefined), versionId, lastUpdated },
  } as FhirResource;
  return {
    resourceType,
    id,
    versionId,
    lastUpdated,
    resource,
    status: existing && !existing.deleted ? 200 : 201,
  };
}

/** `W/"3"` or `"3"` or `3` → `3`. @see http://hl7.org/fhir/R4/http.html#concurrency */
function parseETag(tag: string): string {
  return tag
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
}

function assertDistinct(writes: readonly PreparedWrite[]): void {
  const seen = new Set<string>();
  for (const write of writes) {
    const k = key(write.resourceType, write.id);
    if (seen.has(k))
      throw fhirError(
        400,
        'invalid',
        `${write.resourceType}/${write.id} is written twice in one transaction`,
      );
    seen.add(k);
  }
}

/** Locks the current rows of the resources being updated or deleted, so that concurrent writers queue. */
async function lockCurrent(
  tx: Queryable,
  projectId: string,
  writes: readonly PreparedWrite[],
): Promise<Map<string, CurrentRow>> {
  if (writes.length === 0) return new Map();
  const keys = JSON.stringify(writes.map((w) => ({ t: w.resourceType, i: w.id })));
  const { rows } = await tx.query<CurrentRow>(
    `SELECT r.resource_type, r.id, r.version_id, r.deleted
       FROM resource r JOIN jsonb_to_recordset($2::jsonb) AS k(t text, i text) ON r.resource_type = k.t AND r.id = k.i
      WHERE r.project_id = $1
      FOR UPDATE OF r`,
    [projectId, keys],
  );
  return new Map(rows.map((row) => [key(row.resource_type, row.id), row]));
}

interface VersionRow {
  project_id: string;
  resource_type: string;
  id: string;
  version_id: number;
  last_updated: string;
  deleted: boolean;
  content: FhirResource | null;
  /** The version this one replaces, or null for a new resource. */
  previous: number | null;
}

const VERSION_COLUMNS =
  'project_id text, resource_type text, id text, version_id bigint, last_updated timestamptz, deleted boolean, content jsonb, previous bigint';

/**
 * Current rows and history rows, one statement each. A new resource that another transaction
 * created meanwhile (two PUTs to one new id) is refused with 409 rather than overwritten.
 */
async function storeVersions(tx: Queryable, rows: readonly VersionRow[]): Promise<void> {
  // One statement: the JSON is parsed once for both tables.
  const { rows: stored } = await tx.query<{ stored: number; expected: number }>(
    `WITH x AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(${VERSION_COLUMNS})),
     current AS (
       INSERT INTO resource AS r (project_id, resource_type, id, version_id, last_updated, deleted, content)
       SELECT project_id, resource_type, id, version_id, last_updated, deleted, content FROM x
       ON CONFLICT (project_id, resource_type, id) DO UPDATE
         SET version_id = excluded.version_id, last_updated = excluded.last_updated,
             deleted = excluded.deleted, content = excluded.content
         WHERE r.version_id = excluded.version_id - 1
       RETURNING 1
     ),
     history AS (
       INSERT INTO resource_history (project_id, resource_type, id, version_id, last_updated, deleted, content)
       SELECT project_id, resource_type, id, version_id, last_updated, deleted, content FROM x
     )
     SELECT (SELECT count(*) FROM current)::integer AS stored`,
    [JSON.stringify(rows)],
  );
  if (stored[0].stored !== rows.length) {
    throw fhirError(
      409,
      'conflict',
      'Another request wrote the same resource at the same time; retry',
    );
  }
}

function key(resourceType: string, id: string): string {
  return `${resourceType}/${id}`;
}

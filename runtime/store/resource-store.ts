/**
 * Resources with their versions: reads, history, and writes. Every write — one REST call or a
 * whole transaction Bundle — goes through `write`, which validates, versions, stores the JSON,
 * the history row and the search index in a fixed number of SQL statements in one transaction.
 * @see http://hl7.org/fhir/R4/http.html
 */
import { randomUUID } from 'node:crypto';
import { loadDefinitionRegistry } from '../../generated/definitions/index.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { FhirError, fhirError, toFhirError } from '../model/fhir-error.js';
import { parseResource } from '../validation/validate-resource.js';
import type { Database, Queryable, Transaction } from './database.js';
import { ResourceCache } from './resource-cache.js';
import { CurrentReads, type CurrentRow } from './current-reads.js';
import { StatisticsKeeper } from './statistics.js';
import { TokenCountCompactor } from './token-count-compaction.js';
import { resourceKey } from './resource-keys.js';
import { writeAll, type PreparedWrite } from './write-versions.js';
import type {
  WriteHooks,
  WriteListener,
  WriteOperation,
  WritePreparer,
  WriteResult,
} from './write-operation.js';
import type { SearchSource } from './search-store.js';
import { VersionContents } from './version-contents.js';
import type { MaintenanceFailed } from './maintenance-failed.js';

/** About how many rows (resource, history, search index) one resource version writes. */
const ROWS_PER_RESOURCE = 12;
/** @see http://hl7.org/fhir/R4/datatypes.html#id */
const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;

export interface StoredVersion {
  readonly versionId: string;
  readonly lastUpdated: string;
  readonly deleted: boolean;
  readonly resource?: FhirResource;
}

export class ResourceStore {
  readonly statistics: StatisticsKeeper;
  /** Folds the kept token counts' delta rows (token-count-compaction.ts). */
  readonly tokenCounts: TokenCountCompactor;
  /** Contents of the versions searches found (version-contents.ts). */
  private readonly contents = new VersionContents();
  private readonly cache: ResourceCache;
  private readonly listeners: WriteListener[] = [];

  constructor(
    readonly db: Database,
    private readonly hooks: WriteHooks = {},
    maintenanceFailed?: MaintenanceFailed,
  ) {
    this.statistics = new StatisticsKeeper(db, maintenanceFailed);
    this.tokenCounts = new TokenCountCompactor(db, maintenanceFailed);
    const currentReads = new CurrentReads(db);
    this.cache = new ResourceCache(db, (projectId, keys) => currentReads.read(projectId, keys));
  }

  /**
   * Work every write triggers from now on, enqueued in its transaction (a Subscription's
   * matching); added before the server serves, by what runs that work.
   */
  listen(listener: WriteListener): void {
    this.listeners.push(listener);
  }

  /** Where searches run: in `tx` when given, else in the database. */
  searchSource(tx?: Queryable): SearchSource {
    const inTransaction = tx !== undefined && tx !== this.db;
    return { db: tx ?? this.db, contents: this.contents, keep: !inTransaction };
  }

  /**
   * The current version; 404 when unknown (also another project's), 410 when deleted. It may
   * be a copy shared with other requests (resource-cache.ts): frozen, to be read, not changed.
   */
  async read(
    projectId: string,
    resourceType: string,
    id: string,
    tx: Queryable = this.db,
  ): Promise<FhirResource> {
    const row =
      tx === this.db
        ? (await this.cache.rows(projectId, [{ resourceType, id }])).get(
            resourceKey(resourceType, id),
          )
        : await readInTransaction(tx, projectId, resourceType, id, false);
    return currentContent(row, resourceType, id);
  }

  /**
   * As `read`, in `tx`, with the resource's row locked until `tx` ends: for a write made from
   * what was read (PATCH), which no other write of that resource may come between.
   */
  async readForUpdate(
    projectId: string,
    resourceType: string,
    id: string,
    tx: Transaction,
  ): Promise<FhirResource> {
    const row = await readInTransaction(tx, projectId, resourceType, id, true);
    return currentContent(row, resourceType, id);
  }

  /** Current, non-deleted versions of several resources (shared, as `read`'s); missing ones are absent. */
  async readMany(
    projectId: string,
    keys: readonly { resourceType: string; id: string }[],
  ): Promise<Map<string, FhirResource>> {
    const rows = await this.cache.rows(projectId, keys);
    const found = new Map<string, FhirResource>();
    for (const [key, row] of rows) if (!row.deleted) found.set(key, row.content!);
    return found;
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
    tx?: Transaction,
  ): Promise<WriteResult[]> {
    const prepared = operations.map((operation, index) => {
      try {
        return prepare(operation, this.hooks.preparers ?? []);
      } catch (error) {
        throw operations.length > 1 ? new WriteOperationError(index, error) : error;
      }
    });
    const writeIn = (t: Transaction) => {
      this.cache.writing(t, projectId, prepared);
      return writeAll(t, projectId, prepared, this.hooks.rules ?? [], this.listeners);
    };
    const results = await (tx ? writeIn(tx) : this.db.transaction(writeIn));
    // Counted when the caller's transaction is still open too: an ANALYZE that runs before its
    // commit only sees older rows, and the next write brings the statistics up to date.
    this.statistics.written(results.length * ROWS_PER_RESOURCE);
    this.tokenCounts.written(projectId);
    return results;
  }
}

/**
 * Which of several operations was refused, so that a Bundle can name its entry; to anyone else
 * it is the refusal itself.
 */
export class WriteOperationError extends FhirError {
  constructor(
    readonly index: number,
    readonly reason: unknown,
  ) {
    const error = toFhirError(reason);
    super(
      error.status,
      error.issues,
      error.headers,
      reason instanceof Error ? reason.message : String(reason),
    );
    this.cause = reason;
  }
}

/** Validates the resource and settles its id before anything touches the database. */
function prepare(operation: WriteOperation, preparers: readonly WritePreparer[]): PreparedWrite {
  if (operation.kind === 'delete') {
    // Deleting an unknown resource succeeds (FHIR lets it), but an id no resource can have —
    // `../x`, `a/b`, 65 characters — is a mistake to report, not a deletion to confirm.
    if (!FHIR_ID.test(operation.id))
      throw fhirError(400, 'value', `${JSON.stringify(operation.id)} is not a valid id`);
    return { operation, resourceType: operation.resourceType, id: operation.id };
  }
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
  const resource = preparers.reduce(
    (settled, preparer) => preparer(settled, operation.author),
    operation.resource,
  );
  return {
    operation: resource === operation.resource ? operation : { ...operation, resource },
    resourceType: expectedType,
    id: operation.kind === 'create' ? (operation.id ?? randomUUID()) : operation.id,
  };
}

/** The content of a current row; 404 when there is none, 410 when it is a deletion. */
function currentContent(
  row: CurrentRow | undefined,
  resourceType: string,
  id: string,
): FhirResource {
  if (!row) throw fhirError(404, 'not-found', `${resourceType}/${id} is not known`);
  if (row.deleted)
    throw fhirError(410, 'deleted', `${resourceType}/${id} was deleted (version ${row.versionId})`);
  return row.content!;
}

/** A read inside a transaction sees the transaction's own writes: it cannot share a statement. */
async function readInTransaction(
  tx: Queryable,
  projectId: string,
  resourceType: string,
  id: string,
  lock: boolean,
): Promise<CurrentRow | undefined> {
  const { rows } = await tx.query<{
    deleted: boolean;
    content: FhirResource | null;
    version_id: string;
  }>(
    `SELECT deleted, content, version_id FROM resource WHERE project_id = $1 AND resource_type = $2 AND id = $3${lock ? ' FOR UPDATE' : ''}`,
    [projectId, resourceType, id],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    deleted: row.deleted,
    versionId: String(row.version_id),
    ...(row.content ? { content: row.content } : {}),
  };
}

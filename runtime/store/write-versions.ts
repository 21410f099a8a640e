/**
 * The write path of ResourceStore inside one transaction: lock the current rows, settle each
 * new version (If-Match included), run the write rules, then store current and history rows
 * and the search index, in a fixed number of statements however many resources there are.
 * @see http://hl7.org/fhir/R4/http.html#concurrency
 */
import { loadSearchDefinition } from '../../generated/search/index.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import { extractSearchIndex } from '../search/extract-search-index.js';
import type { Queryable, Transaction } from './database.js';
import { resourceKey, resourceKeysCondition } from './resource-keys.js';
import type {
  WriteListener,
  WriteOperation,
  WriteResult,
  WriteRule,
  WrittenVersion,
} from './write-operation.js';
import { searchIndexWrites, type IndexEntry } from './search-index-writer.js';

/** An operation whose resource has been validated and whose id is settled. */
export interface PreparedWrite {
  readonly operation: WriteOperation;
  readonly resourceType: string;
  readonly id: string;
}

interface CurrentRow {
  resource_type: string;
  id: string;
  version_id: string | number;
  deleted: boolean;
}

export async function writeAll(
  tx: Transaction,
  projectId: string,
  writes: readonly PreparedWrite[],
  rules: readonly WriteRule[],
  listeners: readonly WriteListener[],
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
  const written: WrittenVersion[] = [];
  for (const write of writes) {
    const existing = current.get(resourceKey(write.resourceType, write.id));
    const result = nextVersion(write, existing, lastUpdated);
    results.push(result);
    // Deleting what is not there, or no longer there, writes nothing.
    const changed = result.resource !== undefined || (existing !== undefined && !existing.deleted);
    if (changed) {
      rows.push({
        resource_type: write.resourceType,
        id: write.id,
        version_id: Number(result.versionId),
        last_updated: lastUpdated,
        deleted: !result.resource,
        content: result.resource ?? null,
        previous: existing ? Number(existing.version_id) : null,
      });
      const interaction = !result.resource ? 'delete' : result.status === 201 ? 'create' : 'update';
      written.push({
        resourceType: write.resourceType,
        id: write.id,
        versionId: result.versionId,
        interaction,
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
  await storeVersions(
    tx,
    projectId,
    lastUpdated,
    rows,
    rows.map((row) => ({
      resourceType: row.resource_type,
      id: row.id,
      versionId: row.version_id,
      replacing: row.previous !== null,
      index: row.content
        ? extractSearchIndex(row.content, loadSearchDefinition(row.resource_type))
        : undefined,
    })),
  );
  for (const listener of listeners) await listener(tx, projectId, written);
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
export function parseETag(tag: string): string {
  return tag
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
}

function assertDistinct(writes: readonly PreparedWrite[]): void {
  const seen = new Set<string>();
  for (const write of writes) {
    const k = resourceKey(write.resourceType, write.id);
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
  const values: unknown[] = [projectId];
  const { rows } = await tx.query<CurrentRow>(
    `SELECT r.resource_type, r.id, r.version_id, r.deleted FROM resource r
      WHERE r.project_id = $1 AND ${resourceKeysCondition('r', writes, values)}
      FOR UPDATE OF r`,
    values,
    { prepared: 'recurring' },
  );
  return new Map(rows.map((row) => [resourceKey(row.resource_type, row.id), row]));
}

interface VersionRow {
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
  'resource_type text, id text, version_id bigint, last_updated timestamptz, deleted boolean, content jsonb, previous bigint';

/**
 * Current rows, history rows and the search index, in one statement (one round trip to the
 * database, and the version JSON parsed once for both tables), kept prepared once it recurs. A
 * new resource that another transaction created meanwhile (two PUTs to one new id) is refused
 * with 409 rather than overwritten; the transaction then rolls back, index rows included. When
 * that other transaction committed while this statement ran, its history row is there first:
 * the history's key refuses the same version twice (unique_violation), and that is the same 409.
 */
async function storeVersions(
  tx: Queryable,
  projectId: string,
  lastUpdated: string,
  rows: readonly VersionRow[],
  index: readonly IndexEntry[],
): Promise<void> {
  const values: unknown[] = [JSON.stringify(rows), projectId];
  const indexWrites = searchIndexWrites('$2', lastUpdated, index, values);
  const { rows: stored } = await tx
    .query<{ stored: number; expected: number }>(
      `WITH x AS (SELECT $2::text AS project_id, * FROM jsonb_to_recordset($1::jsonb) AS x(${VERSION_COLUMNS})),
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
     ${indexWrites.map((cte) => `, ${cte}`).join('\n     ')}
     SELECT (SELECT count(*) FROM current)::integer AS stored`,
      values,
      // Its text depends only on which index tables get rows (and for updates on how many types
      // are replaced): the same few texts recur. Parsing and planning it is most of a lone
      // write's cost on PGlite.
      { prepared: 'recurring' },
    )
    .catch((error: unknown) => {
      throw (error as { code?: unknown } | null)?.code === UNIQUE_VIOLATION ? writeClash() : error;
    });
  if (stored[0].stored !== rows.length) throw writeClash();
}

/** SQLSTATE of a key that exists already. */
const UNIQUE_VIOLATION = '23505';

function writeClash() {
  return fhirError(
    409,
    'conflict',
    'Another request wrote the same resource at the same time; retry',
  );
}

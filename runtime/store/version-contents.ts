/**
 * Resource contents by version, for searches. A version never changes once written: every write
 * makes a new `version_id`, and resource_history keeps each. So a copy kept under (project, type,
 * id, version) is exact on both engines and whatever other processes write, and is never
 * invalidated, only evicted. Searches select each match's type, id and version, take the
 * contents from here, and read from resource_history only the versions not kept yet.
 *
 * Why: sending JSON contents out of the database and parsing them is most of a search's cost
 * (`npm run bench:statements`): a page's types, ids and versions alone take about a third of the
 * time of the page with its contents.
 *
 * Copies are shared by every request, so they are frozen (as in resource-cache.ts).
 */
import type { FhirResource } from '../model/fhir-resource.js';
import type { Queryable } from './database.js';
import { BoundedLru } from './bounded-lru.js';
import { deepFreeze } from './resource-cache.js';

/** A search match: its key and the version the search found current. */
export interface VersionKey {
  readonly resource_type: string;
  readonly id: string;
  /** bigint: a string from PostgreSQL, a number from PGlite. */
  readonly version_id: string | number;
}

/**
 * Copies kept at most, and their stored size at most (the least recently used go first):
 * parsed, a resource takes a few times its stored JSONB size on the heap, so some 50–100 MB.
 */
const MAX_ENTRIES = 10_000;
const MAX_BYTES = 16 * 1024 * 1024;

/** The versions a search found that are not kept yet, from resource_history, in one statement. */
const READ_VERSIONS = `SELECT h.resource_type, h.id, h.version_id, h.content, pg_column_size(h.content) AS bytes
  FROM resource_history h
  WHERE h.project_id = $1
    AND (h.resource_type, h.id, h.version_id) IN (SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[]))`;

export class VersionContents {
  private readonly copies = new BoundedLru<FhirResource>(MAX_ENTRIES, MAX_BYTES);

  /**
   * The contents of `keys`, in their order; one statement reads those not kept, and keeps them
   * when `keep` says so (not in a transaction, which may yet roll back versions it wrote).
   */
  async contents(
    db: Queryable,
    projectId: string,
    keys: readonly VersionKey[],
    keep: boolean,
  ): Promise<FhirResource[]> {
    const found = keys.map((key) => this.copies.get(versionKey(projectId, key)));
    const missing = keys.filter((_, index) => found[index] === undefined);
    if (missing.length > 0) {
      const { rows } = await db.query<VersionKey & { content: FhirResource; bytes: number }>(
        READ_VERSIONS,
        [
          projectId,
          missing.map((key) => key.resource_type),
          missing.map((key) => key.id),
          missing.map((key) => String(key.version_id)),
        ],
        { prepared: 'fixed' },
      );
      const read = new Map<string, FhirResource>();
      for (const row of rows) {
        const key = versionKey(projectId, row);
        read.set(key, row.content);
        if (keep && !this.copies.has(key)) {
          deepFreeze(row.content);
          this.copies.set(key, row.content, Number(row.bytes));
        }
      }
      keys.forEach((key, index) => {
        found[index] ??= read.get(versionKey(projectId, key));
      });
    }
    return found.map((content, index) => {
      if (content) return content;
      const { resource_type, id, version_id } = keys[index];
      throw new Error(`Version ${version_id} of ${resource_type}/${id} is missing from history`);
    });
  }
}

function versionKey(projectId: string, key: VersionKey): string {
  return `${projectId}\u0000${key.resource_type}\u0000${key.id}\u0000${key.version_id}`;
}

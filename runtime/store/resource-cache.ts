/**
 * Current versions of the resources one hot path reads by id again and again (a Bot, before each
 * `$execute`), kept in memory so that the path does not wait for the database each time.
 *
 * A copy is handed out with `current`, which says whether it is still the current version:
 * - PGlite belongs to this one process, so every write passes through this store. A copy is
 *   dropped when a write of it begins, none is kept or used while that write's transaction is
 *   open, and one read after it ends is current: `current` is true at once.
 * - On PostgreSQL other processes write too. `current` compares the copy's version with the
 *   database's, one small query that the caller runs beside its own work; until it resolves
 *   true, nothing done with the copy may be seen outside.
 */
import type { FhirResource } from '../graphql/graphql-context.js';
import type { Database, Transaction } from './database.js';

export interface CachedResource {
  readonly resource: FhirResource;
  /** True when `resource` is the current version; false when it is not (read it again). */
  readonly current: Promise<boolean>;
}

/** A key (project, type, id) of a resource a write is about to change. */
export interface WrittenKey {
  readonly projectId: string;
  readonly resourceType: string;
  readonly id: string;
}

/** Copies kept at most, and their JSON's characters at most (the least recently used go first). */
const MAX_ENTRIES = 1000;
const MAX_CHARS = 32 * 1024 * 1024;
const CONFIRMED = Promise.resolve(true);

interface Entry {
  readonly resource: FhirResource;
  readonly versionId: string;
  readonly chars: number;
}

export class ResourceCache {
  private readonly entries = new Map<string, Entry>();
  private chars = 0;
  /** Keys with a write in an open transaction, and how many. */
  private readonly open = new Map<string, number>();
  /** Counts ended writes: a read that began before one ended may have seen the old version. */
  private ended = 0;

  constructor(
    private readonly db: Database,
    readonly types: ReadonlySet<string>,
    private readonly readCurrent: (
      projectId: string,
      resourceType: string,
      id: string,
    ) => Promise<FhirResource>,
  ) {}

  /** The resource (404 and 410 as a read), from memory when there is a copy. */
  async read(projectId: string, resourceType: string, id: string): Promise<CachedResource> {
    const key = cacheKey(projectId, resourceType, id);
    const entry = this.entries.get(key);
    if (entry && !this.open.has(key)) {
      // Most recently used last: the first entries are the ones to evict.
      this.entries.delete(key);
      this.entries.set(key, entry);
      if (this.db.engine === 'pglite') return { resource: entry.resource, current: CONFIRMED };
      const current = this.isCurrent(projectId, resourceType, id, entry.versionId);
      // Awaited later, after the caller's own work: a failure meanwhile is not unhandled.
      current.catch(() => {});
      return { resource: entry.resource, current };
    }
    const ended = this.ended;
    const resource = await this.readCurrent(projectId, resourceType, id);
    if (ended === this.ended && !this.open.has(key)) this.keep(key, resource);
    return { resource, current: CONFIRMED };
  }

  /** Called as a write of `keys` begins in `tx`: their copies go, and stay away until it ends. */
  writing(tx: Transaction, keys: readonly WrittenKey[]): void {
    for (const { projectId, resourceType, id } of keys) {
      if (!this.types.has(resourceType)) continue;
      const key = cacheKey(projectId, resourceType, id);
      this.drop(key);
      this.open.set(key, (this.open.get(key) ?? 0) + 1);
      tx.afterEnd(() => {
        const left = (this.open.get(key) ?? 1) - 1;
        if (left > 0) this.open.set(key, left);
        else this.open.delete(key);
        this.drop(key);
        this.ended++;
      });
    }
  }

  private async isCurrent(
    projectId: string,
    resourceType: string,
    id: string,
    versionId: string,
  ): Promise<boolean> {
    const { rows } = await this.db.query<{ version_id: string | number }>(
      'SELECT version_id FROM resource WHERE project_id = $1 AND resource_type = $2 AND id = $3 AND NOT deleted',
      [projectId, resourceType, id],
      { prepared: 'fixed' },
    );
    const current = rows.length > 0 && String(rows[0].version_id) === versionId;
    if (!current) this.drop(cacheKey(projectId, resourceType, id));
    return current;
  }

  private keep(key: string, resource: FhirResource): void {
    const versionId = (resource.meta as { versionId?: string } | undefined)?.versionId;
    const chars = JSON.stringify(resource).length;
    if (versionId === undefined || chars > MAX_CHARS / 8) return;
    this.drop(key);
    this.entries.set(key, { resource, versionId, chars });
    this.chars += chars;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= MAX_ENTRIES && this.chars <= MAX_CHARS) break;
      this.entries.delete(oldest);
      this.chars -= entry.chars;
    }
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.chars -= entry.chars;
  }
}

function cacheKey(projectId: string, resourceType: string, id: string): string {
  return `${projectId}\u0000${resourceType}\u0000${id}`;
}

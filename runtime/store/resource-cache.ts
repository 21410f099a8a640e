/**
 * Current versions of resources kept in memory, so that reads by id need not wait for the
 * database each time.
 *
 * - PGlite belongs to this one process, so every write passes through this store: the cache is
 *   exact, and holds resources of every type. A copy is dropped when a write of it begins; none
 *   is kept or used while that write's transaction is open; and a read that began before the
 *   transaction ended is not kept. A PGlite query costs 0.14 ms even for `SELECT 1`, 0.33 ms
 *   for a read by id; a copy costs a Map lookup.
 * - On PostgreSQL other processes write too. Only the `checkedTypes` (a Bot, read before each
 *   `$execute`) are kept, and each use of a copy comes with `current`: its version compared with
 *   the database's, one small query the caller runs beside its own work. Until it resolves true,
 *   nothing done with the copy may be seen outside. Other reads go to the database: checking a
 *   version costs about what reading the row does.
 *
 * Copies are shared by every request, so they are frozen: code that changed a resource it read
 * would throw, not corrupt what the next request reads.
 */
import type { FhirResource } from '../graphql/graphql-context.js';
import type { CurrentRow } from './current-reads.js';
import { BoundedLru } from './bounded-lru.js';
import type { Database, Transaction } from './database.js';
import { resourceKey, type ResourceKey } from './resource-keys.js';

export interface CachedResource {
  readonly resource: FhirResource;
  /** True when `resource` is the current version; false when it is not (read it again). */
  readonly current: Promise<boolean>;
}

/**
 * Copies kept at most, and their JSON's characters at most (the least recently used go first):
 * parsed, a resource takes a few times its JSON's size on the heap, so at most some 50–80 MB.
 */
const MAX_ENTRIES = 10_000;
const MAX_CHARS = 16 * 1024 * 1024;
const CONFIRMED = Promise.resolve(true);

type LoadRows = (
  projectId: string,
  keys: readonly ResourceKey[],
) => Promise<Map<string, CurrentRow>>;

export class ResourceCache {
  /** Every read by id goes through the cache (PGlite), not only `read` of the checked types. */
  readonly exact: boolean;
  private readonly copies = new BoundedLru<CurrentRow>(MAX_ENTRIES, MAX_CHARS);
  /** Keys with a write in an open transaction, and how many. */
  private readonly open = new Map<string, number>();
  /** Counts ended writes: a read that began before one ended may have seen the old version. */
  private ended = 0;

  constructor(
    private readonly db: Database,
    private readonly checkedTypes: ReadonlySet<string>,
    private readonly load: LoadRows,
  ) {
    this.exact = db.engine === 'pglite';
  }

  /** The current rows of `keys` that exist (deleted ones too), by `resourceKey`. */
  async rows(projectId: string, keys: readonly ResourceKey[]): Promise<Map<string, CurrentRow>> {
    if (!this.exact) return this.load(projectId, keys);
    const found = new Map<string, CurrentRow>();
    const missing: ResourceKey[] = [];
    for (const key of keys) {
      const row = this.usable(cacheKey(projectId, key.resourceType, key.id));
      if (row) found.set(resourceKey(key.resourceType, key.id), row);
      else missing.push(key);
    }
    if (missing.length > 0) {
      const ended = this.ended;
      const loaded = await this.load(projectId, missing);
      for (const { resourceType, id } of missing) {
        const row = loaded.get(resourceKey(resourceType, id));
        if (!row) continue;
        found.set(resourceKey(resourceType, id), row);
        this.keepIfCurrent(cacheKey(projectId, resourceType, id), row, ended);
      }
    }
    return found;
  }

  /**
   * A resource of a checked type by id, from a copy when there is one, with `current` (see
   * above). `readCurrent` reads it from the database, 404 and 410 included.
   */
  async read(
    projectId: string,
    resourceType: string,
    id: string,
    readCurrent: () => Promise<FhirResource>,
  ): Promise<CachedResource> {
    if (!this.checkedTypes.has(resourceType))
      throw new Error(`${resourceType} is not one of the cache's checked types`);
    // Exact: `readCurrent` reads through `rows`, from a copy when there is one.
    if (this.exact) return { resource: await readCurrent(), current: CONFIRMED };
    const key = cacheKey(projectId, resourceType, id);
    const row = this.usable(key);
    if (row?.content) {
      const current = this.isCurrent(projectId, resourceType, id, row.versionId);
      // Awaited later, after the caller's own work: a failure meanwhile is not unhandled.
      current.catch(() => {});
      return { resource: row.content, current };
    }
    const ended = this.ended;
    const resource = await readCurrent();
    const versionId = (resource.meta as { versionId?: string } | undefined)?.versionId;
    if (versionId !== undefined)
      this.keepIfCurrent(key, { deleted: false, versionId, content: resource }, ended);
    return { resource, current: CONFIRMED };
  }

  /** Called as a write of `keys` begins in `tx`: their copies go, and stay away until it ends. */
  writing(tx: Transaction, projectId: string, keys: readonly ResourceKey[]): void {
    for (const { resourceType, id } of keys) {
      if (!this.exact && !this.checkedTypes.has(resourceType)) continue;
      const key = cacheKey(projectId, resourceType, id);
      this.copies.delete(key);
      this.open.set(key, (this.open.get(key) ?? 0) + 1);
      tx.afterEnd(() => {
        const left = (this.open.get(key) ?? 1) - 1;
        if (left > 0) this.open.set(key, left);
        else this.open.delete(key);
        this.copies.delete(key);
        this.ended++;
      });
    }
  }

  /** The copy under `key` unless a write of it is open. */
  private usable(key: string): CurrentRow | undefined {
    return this.open.has(key) ? undefined : this.copies.get(key);
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
      // The caller's own work (a bot in a sandbox worker) needs the core more than a poll does.
      { prepared: 'fixed', poll: false },
    );
    const current = rows.length > 0 && String(rows[0].version_id) === versionId;
    if (!current) this.copies.delete(cacheKey(projectId, resourceType, id));
    return current;
  }

  /** Keeps `row`, read when `ended` writes had ended, unless a write of it ended or began since. */
  private keepIfCurrent(key: string, row: CurrentRow, ended: number): void {
    if (ended !== this.ended || this.open.has(key)) return;
    const chars = row.content ? JSON.stringify(row.content).length : 0;
    if (row.content) deepFreeze(row.content);
    this.copies.set(key, row, chars);
  }
}

function cacheKey(projectId: string, resourceType: string, id: string): string {
  return `${projectId}\u0000${resourceType}\u0000${id}`;
}

/** Freezes `value` and everything in it: a copy shared between requests must not change. */
export function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}

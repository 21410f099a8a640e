/**
 * Current versions of resources kept in memory on PGlite, so that reads by id need not wait for
 * the database each time. PGlite belongs to this one process, so every write passes through this
 * store and the cache can be exact: a copy is dropped when a write of it begins; none is kept or
 * used while that write's transaction is open; and a read that began before the transaction
 * ended is not kept. Every PGlite statement, even `SELECT 1`, costs a trip through its
 * WebAssembly engine; a copy costs a Map lookup.
 *
 * On PostgreSQL other processes write too, so every read goes to the database.
 *
 * Copies are shared by every request, so they are frozen: code that changed a resource it read
 * would throw, not corrupt what the next request reads.
 */
import type { CurrentRow } from './current-reads.js';
import { BoundedLru } from './bounded-lru.js';
import type { Database, Transaction } from './database.js';
import { resourceKey, type ResourceKey } from './resource-keys.js';

/**
 * Copies kept at most, and their JSON's characters at most (the least recently used go first):
 * parsed, a resource takes a few times its JSON's size on the heap, so at most some 50–80 MB.
 */
const MAX_ENTRIES = 10_000;
const MAX_CHARS = 16 * 1024 * 1024;

type LoadRows = (
  projectId: string,
  keys: readonly ResourceKey[],
) => Promise<Map<string, CurrentRow>>;

export class ResourceCache {
  /** Whether copies are kept at all: only where every write passes through here (PGlite). */
  private readonly exact: boolean;
  private readonly copies = new BoundedLru<CurrentRow>(MAX_ENTRIES, MAX_CHARS);
  /** Keys with a write in an open transaction, and how many. */
  private readonly open = new Map<string, number>();
  /** Counts ended writes: a read that began before one ended may have seen the old version. */
  private ended = 0;

  constructor(
    db: Database,
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

  /** Called as a write of `keys` begins in `tx`: their copies go, and stay away until it ends. */
  writing(tx: Transaction, projectId: string, keys: readonly ResourceKey[]): void {
    for (const { resourceType, id } of keys) {
      if (!this.exact) return;
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

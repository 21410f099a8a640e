/**
 * A map that keeps at most `maxEntries` values and `maxSize` of their sizes together, dropping
 * the least recently used first. A Map iterates in insertion order, so a value used is moved to
 * the end and the first ones are the oldest.
 *
 * Moving is a delete and a set, which in a Map of thousands of entries also compacts its table
 * now and then: that was most of a hit's cost, and a search page is many hits. So a value used while among the newer half is not moved:
 * values go from the older end, so it is not next to go either way, only sooner than exact LRU
 * would drop it.
 */
export class BoundedLru<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private total = 0;
  /** Values appended at the end so far (set, or moved there). */
  private appended = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxSize: number,
  ) {}

  /** The value under `key`, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    // At most `appended - entry.stamp` values are newer than this one.
    if (this.appended - entry.stamp > this.entries.size / 2) {
      this.entries.delete(key);
      this.append(key, entry);
    }
    return entry.value;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * Keeps `value` under `key` in place of what was there, unless it alone would take more than
   * an eighth of `maxSize` (it would push out too much else); false when it was not kept.
   */
  set(key: string, value: V, size: number): boolean {
    this.delete(key);
    if (size > this.maxSize / 8) return false;
    this.append(key, { value, size, stamp: 0 });
    this.total += size;
    for (const [oldest, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && this.total <= this.maxSize) break;
      this.entries.delete(oldest);
      this.total -= entry.size;
    }
    return true;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.size;
  }

  /** How many values are kept, and their sizes together. */
  get usage(): { readonly entries: number; readonly size: number } {
    return { entries: this.entries.size, size: this.total };
  }

  private append(key: string, entry: Entry<V>): void {
    entry.stamp = ++this.appended;
    this.entries.set(key, entry);
  }
}

interface Entry<V> {
  readonly value: V;
  readonly size: number;
  /** `appended` when it was last put at the end. */
  stamp: number;
}

/**
 * A map that keeps at most `maxEntries` values and `maxSize` of their sizes together, dropping
 * the least recently used first. A Map iterates in insertion order, so a value used is moved to
 * the end and the first ones are the oldest.
 */
export class BoundedLru<V> {
  private readonly entries = new Map<string, { readonly value: V; readonly size: number }>();
  private total = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxSize: number,
  ) {}

  /** The value under `key`, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
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
    this.entries.set(key, { value, size });
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
}

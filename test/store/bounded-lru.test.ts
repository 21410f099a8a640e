/**
 * The bound of the resource copies kept in memory (runtime/store/bounded-lru.ts): never more
 * entries or size than allowed, the least recently used going first (but for values used while
 * among the newer half, which keep their place).
 */
import { describe, expect, it } from 'vitest';
import { BoundedLru } from '../../runtime/store/bounded-lru.js';

describe('BoundedLru', () => {
  it('keeps at most maxEntries, dropping the least recently used', () => {
    const lru = new BoundedLru<number>(3, 1000);
    for (const key of ['a', 'b', 'c']) lru.set(key, key.charCodeAt(0), 1);
    expect(lru.get('a')).toBe(97);
    lru.set('d', 100, 1);
    expect(lru.has('b')).toBe(false);
    expect(['a', 'c', 'd'].map((key) => lru.has(key))).toEqual([true, true, true]);
    expect(lru.usage).toEqual({ entries: 3, size: 3 });
  });

  it('moves a value used among the older half to the newest end, one among the newer half not', () => {
    const lru = new BoundedLru<number>(10, 1000);
    for (let i = 0; i < 10; i++) lru.set(`k${i}`, i, 1);
    // k0 and k1 are among the older half: used, they go to the newest end.
    expect(lru.get('k1')).toBe(1);
    expect(lru.get('k0')).toBe(0);
    // k9, used while among the newer half, stays where it is: seven are older than it still.
    expect(lru.get('k9')).toBe(9);
    for (let i = 10; i < 17; i++) lru.set(`k${i}`, i, 1);
    expect(['k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8'].some((key) => lru.has(key))).toBe(false);
    expect(['k9', 'k1', 'k0', 'k16'].map((key) => lru.has(key))).toEqual([true, true, true, true]);
    // k9 kept its place: it is the oldest now, though used after k1 and k0.
    lru.set('k17', 17, 1);
    expect(lru.has('k9')).toBe(false);
    expect(lru.has('k1')).toBe(true);
  });

  it('keeps at most maxSize in all, however many entries that is', () => {
    const lru = new BoundedLru<string>(100, 800);
    for (let i = 0; i < 20; i++) lru.set(`k${i}`, 'x', 90);
    expect(lru.usage.size).toBeLessThanOrEqual(800);
    expect(lru.usage).toEqual({ entries: 8, size: 720 });
    expect(lru.has('k11')).toBe(false);
    expect(lru.has('k12')).toBe(true);
    expect(lru.has('k19')).toBe(true);
  });

  it('refuses a value larger than an eighth of maxSize, and drops what it replaced', () => {
    const lru = new BoundedLru<string>(10, 800);
    expect(lru.set('k', 'old', 10)).toBe(true);
    expect(lru.set('k', 'too big', 101)).toBe(false);
    expect(lru.get('k')).toBeUndefined();
    expect(lru.usage).toEqual({ entries: 0, size: 0 });
  });

  it('replaces a value under the same key and counts its size once', () => {
    const lru = new BoundedLru<string>(10, 800);
    lru.set('k', 'one', 40);
    lru.set('k', 'two', 60);
    expect(lru.get('k')).toBe('two');
    expect(lru.usage).toEqual({ entries: 1, size: 60 });
    lru.delete('k');
    lru.delete('k');
    expect(lru.usage).toEqual({ entries: 0, size: 0 });
  });
});

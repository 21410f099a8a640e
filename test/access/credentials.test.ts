/**
 * Generated client ids and secrets are pasted into command lines (`graphir bot deploy
 * --client-secret …`), where a value starting with `-` reads as an option: none ever does.
 */
import { describe, expect, it } from 'vitest';
import { newCredential, newSecret } from '../../runtime/access/secret-hash.js';

describe('generated credentials', () => {
  it.each([
    ['client ids (12 bytes)', () => newCredential(12), 16],
    ['secrets (32 bytes)', () => newSecret(), 43],
  ])('%s never start with "-" and keep their length and alphabet', (_name, draw, length) => {
    // One base64url text in 64 starts with "-": 20,000 draws would meet one all but surely.
    const drawn = Array.from({ length: 20_000 }, draw);
    expect(drawn.filter((text) => text.startsWith('-'))).toEqual([]);
    for (const text of drawn) expect(text).toMatch(new RegExp(`^[A-Za-z0-9_-]{${length}}$`));
    expect(new Set(drawn).size).toBe(drawn.length);
  });
});

/**
 * Client secrets are stored only as salted scrypt hashes and compared in constant time.
 * Format: `scrypt$N$r$p$<salt base64url>$<hash base64url>`, so the cost can grow later.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const COST = { N: 16384, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(secret, salt, COST);
  return [
    'scrypt',
    COST.N,
    COST.r,
    COST.p,
    salt.toString('base64url'),
    hash.toString('base64url'),
  ].join('$');
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(secret, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A new random secret: 32 bytes, base64url. */
export function newSecret(): string {
  return newCredential(32);
}

/**
 * `bytes` random bytes in base64url, drawn again while the text starts with `-`: a command line
 * reads `--client-secret -x…` as an option, not a value (one draw in 64; the few bits this
 * costs leave far more than a secret needs).
 */
export function newCredential(bytes: number): string {
  for (;;) {
    const text = randomBytes(bytes).toString('base64url');
    if (!text.startsWith('-')) return text;
  }
}

function derive(secret: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(secret, salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

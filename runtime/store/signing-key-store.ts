/**
 * The keys that sign access tokens, kept in the database so that every server process on it
 * signs and verifies with the same ones (migrations/003-access.sql).
 */
import type { Database } from './database.js';

/** A key as JSON Web Keys. */
export interface SigningKeyRow {
  readonly kid: string;
  readonly algorithm: string;
  readonly privateJwk: object;
  readonly publicJwk: object;
}

/** Taken while the first key is made, so that processes starting together make only one. */
const KEY_LOCK = 7_215_002;

export class SigningKeyStore {
  constructor(private readonly db: Database) {}

  /** Newest first. */
  async keys(): Promise<SigningKeyRow[]> {
    const { rows } = await this.db.query<{
      kid: string;
      algorithm: string;
      private_jwk: object;
      public_jwk: object;
    }>(
      'SELECT kid, algorithm, private_jwk, public_jwk FROM signing_key ORDER BY created DESC, kid',
    );
    return rows.map((row) => ({
      kid: row.kid,
      algorithm: row.algorithm,
      privateJwk: row.private_jwk,
      publicJwk: row.public_jwk,
    }));
  }

  /** Stores the key that `make` makes unless the store holds one already (any process's). */
  async addFirst(make: () => Promise<SigningKeyRow>): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [KEY_LOCK]);
      const { rows } = await tx.query('SELECT 1 FROM signing_key LIMIT 1');
      if (rows.length > 0) return;
      const key = await make();
      await tx.query(
        'INSERT INTO signing_key (kid, algorithm, private_jwk, public_jwk) VALUES ($1, $2, $3::jsonb, $4::jsonb)',
        [key.kid, key.algorithm, JSON.stringify(key.privateJwk), JSON.stringify(key.publicJwk)],
      );
    });
  }
}

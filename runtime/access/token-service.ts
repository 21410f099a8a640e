/**
 * Signed access tokens: ES256 JWTs with a `kid`, signed with keys kept in the store so that
 * every server process accepts every other's tokens. Verified tokens are cached briefly
 * (verifying a signature costs more than many requests), but whether the client still exists is checked on every call.
 */
import { randomUUID } from 'node:crypto';
import {
  SignJWT,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  type JWK,
  type JWTPayload,
} from 'jose';
import type { SigningKeyStore } from '../store/signing-key-store.js';
import { DatabaseUnavailableError } from '../store/database-errors.js';
import { Scopes } from './scopes.js';

const ALGORITHM = 'ES256';
const ISSUER = 'graphir';
const CACHE_LIMIT = 10_000;
const CACHE_SECONDS = 60;
/** The least time between two reads of the signing keys prompted by unknown kids. */
const KEY_RELOAD_MS = 10_000;

export interface AccessClaims {
  readonly clientId: string;
  /** Absent for the root client, which administers projects and reads no FHIR data. */
  readonly projectId?: string;
  readonly scopes: Scopes;
  readonly admin: boolean;
  /** Seconds since the epoch. */
  readonly expires: number;
}

export class InvalidTokenError extends Error {}

type KeyMaterial = Awaited<ReturnType<typeof importJWK>>;

interface Key {
  readonly kid: string;
  readonly privateKey: KeyMaterial;
  readonly publicKey: KeyMaterial;
}

export class TokenService {
  private readonly verified = new Map<string, AccessClaims>();
  /** When the keys were last read from the store, and the read under way. */
  private reloaded = Date.now();
  private reloading: Promise<void> | undefined;

  private constructor(
    private readonly store: SigningKeyStore,
    private keys: Key[],
    readonly lifetimeSeconds: number,
  ) {}

  /** Loads the signing keys, making the first one if the store has none. */
  static async open(store: SigningKeyStore, lifetimeSeconds: number): Promise<TokenService> {
    let keys = await loadKeys(store);
    if (keys.length === 0) {
      await store.addFirst(async () => {
        const { privateKey, publicKey } = await generateKeyPair(ALGORITHM, { extractable: true });
        return {
          kid: randomUUID(),
          algorithm: ALGORITHM,
          privateJwk: await exportJWK(privateKey),
          publicJwk: await exportJWK(publicKey),
        };
      });
      keys = await loadKeys(store);
    }
    return new TokenService(store, keys, lifetimeSeconds);
  }

  async issue(
    client: { id: string; projectId?: string; admin: boolean },
    scopes: Scopes,
  ): Promise<string> {
    const key = this.keys[0];
    return new SignJWT({
      scope: scopes.toString(),
      ...(client.projectId ? { project: client.projectId } : {}),
      admin: client.admin,
    })
      .setProtectedHeader({ alg: ALGORITHM, kid: key.kid, typ: 'JWT' })
      .setIssuer(ISSUER)
      .setSubject(client.id)
      .setIssuedAt()
      .setJti(randomUUID())
      .setExpirationTime(`${this.lifetimeSeconds}s`)
      .sign(key.privateKey);
  }

  /** The token's claims, or InvalidTokenError saying why not (never a stack trace). */
  async verify(token: string): Promise<AccessClaims> {
    const cached = this.verified.get(token);
    const now = Date.now() / 1000;
    if (cached && cached.expires > now) return cached;
    const payload = await this.verifySignature(token);
    const claims: AccessClaims = {
      clientId: String(payload.sub),
      ...(typeof payload.project === 'string' ? { projectId: payload.project } : {}),
      scopes: scopesOf(payload),
      admin: payload.admin === true,
      expires: Math.min(payload.exp ?? now, now + CACHE_SECONDS),
    };
    if (this.verified.size >= CACHE_LIMIT) this.verified.clear();
    this.verified.set(token, claims);
    return claims;
  }

  private async verifySignature(token: string): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, (header) => this.publicKey(header.kid), {
        algorithms: [ALGORITHM],
        issuer: ISSUER,
        requiredClaims: ['sub', 'exp'],
      });
      return payload;
    } catch (error) {
      // An unknown kid sends us to the store for keys: if it cannot answer, nobody can tell
      // whether the token is valid (503), not that it is invalid (401).
      if (error instanceof DatabaseUnavailableError) throw error;
      const code = (error as { code?: string }).code;
      throw new InvalidTokenError(
        code === 'ERR_JWT_EXPIRED'
          ? 'The access token has expired'
          : 'The access token is not valid',
      );
    }
  }

  /**
   * A key made by another process after this one started is fetched on first sight of its kid;
   * the store is asked at most once per KEY_RELOAD_MS, however many unknown kids arrive, so that
   * tokens with made-up kids cost no more than bad signatures do.
   */
  private async publicKey(kid: string | undefined): Promise<KeyMaterial> {
    let key = this.keys.find((k) => k.kid === kid);
    if (!key && kid) {
      await this.reloadKeys();
      key = this.keys.find((k) => k.kid === kid);
    }
    if (!key) throw new InvalidTokenError('The access token was signed by an unknown key');
    return key.publicKey;
  }

  private async reloadKeys(): Promise<void> {
    if (this.reloading) return this.reloading;
    if (Date.now() - this.reloaded < KEY_RELOAD_MS) return;
    this.reloading = loadKeys(this.store)
      .then((keys) => {
        this.keys = keys;
        this.reloaded = Date.now();
      })
      .finally(() => (this.reloading = undefined));
    return this.reloading;
  }
}

/** The token's scopes; a signed token whose `scope` does not parse is invalid, not a fault here. */
function scopesOf(payload: JWTPayload): Scopes {
  try {
    return Scopes.parse(typeof payload.scope === 'string' ? payload.scope : '');
  } catch {
    throw new InvalidTokenError('The access token carries scopes that do not parse');
  }
}

async function loadKeys(store: SigningKeyStore): Promise<Key[]> {
  return Promise.all(
    (await store.keys()).map(async (row) => ({
      kid: row.kid,
      privateKey: await importJWK(row.privateJwk as JWK, ALGORITHM),
      publicKey: await importJWK(row.publicJwk as JWK, ALGORITHM),
    })),
  );
}

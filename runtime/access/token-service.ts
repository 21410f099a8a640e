/**
 * Signed access tokens: ES256 JWTs with a `kid`, signed with keys kept in the store so that
 * every server process accepts every other's tokens. Verified tokens are cached briefly
 * (verifying a signature costs more than many requests); whether the client still exists, and
 * the issuer and audience, which depend on the request, are checked on every call.
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

/** Who issues and accepts tokens: the same for every request to one public address. */
export interface ServerIdentity {
  /** `iss`: the server's public root URL, such as `https://fhir.example.org`. */
  readonly issuer: string;
  /** `aud`: its FHIR base URL, such as `https://fhir.example.org/fhir/R4`. */
  readonly audience: string;
}

export class InvalidTokenError extends Error {}

/** A token whose signature checked out, with what must still match each request. */
interface VerifiedToken {
  readonly claims: AccessClaims;
  readonly issuer: string;
  readonly audience: readonly string[];
}

type KeyMaterial = Awaited<ReturnType<typeof importJWK>>;

interface Key {
  readonly kid: string;
  readonly privateKey: KeyMaterial;
  readonly publicKey: KeyMaterial;
}

export class TokenService {
  private readonly verified = new Map<string, VerifiedToken>();
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

  /**
   * `client_id` and `sub` both name the client: `client_id` as RFC 9068 names it (MedplumClient
   * checks it after login), `sub` as the subject of a client credentials grant.
   */
  async issue(
    client: { id: string; projectId?: string; admin: boolean },
    scopes: Scopes,
    server: ServerIdentity,
  ): Promise<string> {
    const key = this.keys[0];
    return new SignJWT({
      client_id: client.id,
      scope: scopes.toString(),
      ...(client.projectId ? { project: client.projectId } : {}),
      admin: client.admin,
    })
      .setProtectedHeader({ alg: ALGORITHM, kid: key.kid, typ: 'JWT' })
      .setIssuer(server.issuer)
      .setAudience(server.audience)
      .setSubject(client.id)
      .setIssuedAt()
      .setJti(randomUUID())
      .setExpirationTime(`${this.lifetimeSeconds}s`)
      .sign(key.privateKey);
  }

  /**
   * The token's claims, or InvalidTokenError saying why not (never a stack trace). The issuer and
   * audience are checked against `server` on every call, cached or not: one token may reach the
   * server under several addresses, and only one of them is its audience.
   */
  async verify(token: string, server: ServerIdentity): Promise<AccessClaims> {
    const now = Date.now() / 1000;
    let verified = this.verified.get(token);
    if (!verified || verified.claims.expires <= now) {
      verified = verifiedToken(await this.verifySignature(token), now);
      if (this.verified.size >= CACHE_LIMIT) this.verified.clear();
      this.verified.set(token, verified);
    }
    if (!verified.audience.includes(server.audience))
      throw new InvalidTokenError(
        `The access token is for another audience (${verified.audience.join(', ')}), not this server's FHIR base ${server.audience}`,
      );
    if (verified.issuer !== server.issuer)
      throw new InvalidTokenError(
        `The access token was issued by ${verified.issuer}, not by this server (${server.issuer})`,
      );
    return verified.claims;
  }

  private async verifySignature(token: string): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, (header) => this.publicKey(header.kid), {
        algorithms: [ALGORITHM],
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

/** What a signed token says, kept for CACHE_SECONDS at most. */
function verifiedToken(payload: JWTPayload, now: number): VerifiedToken {
  const audience = [payload.aud].flat().filter((aud): aud is string => typeof aud === 'string');
  if (typeof payload.iss !== 'string' || audience.length === 0)
    throw new InvalidTokenError('The access token names no issuer or no audience');
  return {
    claims: {
      clientId: String(payload.sub),
      ...(typeof payload.project === 'string' ? { projectId: payload.project } : {}),
      scopes: scopesOf(payload),
      admin: payload.admin === true,
      expires: Math.min(payload.exp ?? now, now + CACHE_SECONDS),
    },
    issuer: payload.iss,
    audience,
  };
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

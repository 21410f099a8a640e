/**
 * Bearer tokens: one given as it is, or fetched with client credentials from `/oauth2/token` and
 * fetched again shortly before it expires or when the server refuses it.
 */
import { GraphirError } from './graphir-error.js';
import { readJson } from './response-body.js';

export interface Credentials {
  /** Client credentials: the client fetches and renews its tokens itself. */
  clientId?: string;
  clientSecret?: string;
  /** Optional scope sent with client credentials. */
  scope?: string;
  /** A bearer token to use as it is (not renewed unless credentials are given too). */
  accessToken?: string;
}

/** Renew a token this long before it expires (at most a fifth of its lifetime). */
const RENEW_MARGIN_MS = 60_000;
/** What a token response without `expires_in` is taken to last. */
const DEFAULT_LIFETIME_MS = 3_600_000;

interface Token {
  value: string;
  /** Epoch milliseconds after which it is renewed; Infinity for a given token. */
  renewAt: number;
}

interface TokenResponse {
  access_token?: string;
  expires_in?: number;
  error?: string;
  error_description?: string;
}

export class TokenSource {
  readonly #credentials: Credentials;
  readonly #tokenUrl: string;
  readonly #fetch: typeof fetch;
  #token: Token | undefined;
  #pending: Promise<string> | undefined;

  constructor(credentials: Credentials, tokenUrl: string, fetchImpl: typeof fetch) {
    if (!this.#hasCredentials(credentials) && !credentials.accessToken)
      throw new TypeError('GraphirClient needs clientId and clientSecret, or an accessToken');
    this.#credentials = credentials;
    this.#tokenUrl = tokenUrl;
    this.#fetch = fetchImpl;
    if (credentials.accessToken)
      this.#token = { value: credentials.accessToken, renewAt: Infinity };
  }

  /** Whether a refused token can be replaced by a new one. */
  get canRenew(): boolean {
    return this.#hasCredentials(this.#credentials);
  }

  /** The current token, fetched or renewed first when needed; concurrent callers share a fetch. */
  async current(): Promise<string> {
    if (this.#token && Date.now() < this.#token.renewAt) return this.#token.value;
    if (!this.canRenew) {
      if (this.#token) return this.#token.value;
      throw new GraphirError(401, 'No access token and no client credentials');
    }
    this.#pending ??= this.#fetchToken().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** Forget the token the server refused, so that the next call fetches another. */
  discard(): void {
    this.#token = undefined;
  }

  #hasCredentials(credentials: Credentials): boolean {
    return credentials.clientId !== undefined && credentials.clientSecret !== undefined;
  }

  async #fetchToken(): Promise<string> {
    const { clientId, clientSecret, scope } = this.#credentials;
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId!,
      client_secret: clientSecret!,
    });
    if (scope) body.set('scope', scope);
    const response = await this.#fetch(this.#tokenUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: body.toString(),
    });
    const json = (await readJson(response)) as TokenResponse | undefined;
    if (!response.ok || !json || typeof json.access_token !== 'string') {
      const reason = json?.error_description ?? json?.error ?? response.statusText;
      throw new GraphirError(response.status, `Token request failed: ${reason}`);
    }
    const lifetimeMs =
      typeof json.expires_in === 'number' ? json.expires_in * 1000 : DEFAULT_LIFETIME_MS;
    const margin = Math.min(RENEW_MARGIN_MS, lifetimeMs / 5);
    this.#token = { value: json.access_token, renewAt: Date.now() + lifetimeMs - margin };
    return json.access_token;
  }
}

/**
 * The signed-in session: an access token kept in the tab's sessionStorage (never a cookie, so no
 * request carries it unless the app puts it in `Authorization`), under the key the GraphQL
 * playground reads too, so that both pages of one tab share one sign-in.
 */
import { Scopes } from '../../../runtime/access/scopes.js';

export const TOKEN_STORAGE_KEY = 'graphir.token';

/** What the app reads from the token's claims (docs/access.md); the server checks the signature. */
export interface Session {
  readonly token: string;
  readonly clientId: string;
  readonly projectId: string | undefined;
  readonly admin: boolean;
  readonly scopes: Scopes;
  readonly scopeText: string;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
}

export class TokenFormatError extends Error {}

/** The session a token stands for; throws TokenFormatError when it is no JWT with a scope. */
export function sessionOf(token: string): Session {
  const payload = token.split('.')[1];
  if (!payload || token.split('.').length !== 3)
    throw new TokenFormatError('This is not an access token (a JWT of three parts).');
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(base64UrlDecode(payload)) as Record<string, unknown>;
  } catch {
    throw new TokenFormatError('The token’s claims cannot be read.');
  }
  const scopeText = typeof claims.scope === 'string' ? claims.scope : '';
  let scopes: Scopes;
  try {
    scopes = Scopes.parse(scopeText);
  } catch (error) {
    throw new TokenFormatError(`The token’s scope is not valid: ${(error as Error).message}`);
  }
  return {
    token,
    clientId: String(claims.client_id ?? claims.sub ?? ''),
    projectId: typeof claims.project === 'string' ? claims.project : undefined,
    admin: claims.admin === true,
    scopes,
    scopeText,
    expiresAt: typeof claims.exp === 'number' ? claims.exp * 1000 : Infinity,
  };
}

function base64UrlDecode(text: string): string {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

export function storedToken(): string | undefined {
  return sessionStorage.getItem(TOKEN_STORAGE_KEY) ?? undefined;
}

export function storeToken(token: string | undefined): void {
  if (token) sessionStorage.setItem(TOKEN_STORAGE_KEY, token);
  else sessionStorage.removeItem(TOKEN_STORAGE_KEY);
}

/** Asks the server for a token by client credentials (runtime/http/token-routes.ts). */
export async function tokenByClientCredentials(
  clientId: string,
  clientSecret: string,
): Promise<string> {
  const response = await fetch('/oauth2/token', {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    }),
  });
  const body = (await response.json().catch(() => ({}))) as {
    access_token?: string;
    error_description?: string;
  };
  if (!response.ok || !body.access_token)
    throw new Error(body.error_description ?? `The server answered ${response.status}.`);
  return body.access_token;
}

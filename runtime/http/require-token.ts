/**
 * Every call but the public ones carries `Authorization: Bearer <token>`. Missing, malformed,
 * forged or expired tokens, tokens for another audience, and tokens of deleted clients, get 401
 * with `WWW-Authenticate: Bearer` and an OperationOutcome; the verified claims go to
 * `ctx.state.access`.
 */
import type { Context, Middleware } from 'koa';
import type { ClientRegistry } from '../access/client-registry.js';
import {
  InvalidTokenError,
  type AccessClaims,
  type ServerIdentity,
  type TokenService,
} from '../access/token-service.js';
import { FhirError, fhirError } from '../model/fhir-error.js';
import type { IdentityOf } from './server-identity.js';

export function requireToken(
  tokens: TokenService,
  clients: ClientRegistry,
  identityOf: IdentityOf,
): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    if (!header) throw unauthorized('This request needs an access token (Authorization: Bearer …)');
    const match = /^Bearer\s+([A-Za-z0-9._~+/-]+=*)$/i.exec(header.trim());
    if (!match)
      throw unauthorized('The Authorization header is not "Bearer <token>"', 'invalid_request');
    const server = identityOf(ctx);
    if (!server) throw fhirError(400, 'invalid', 'The Host header names no valid host');
    let claims: AccessClaims;
    try {
      claims = await tokens.verify(match[1], server);
    } catch (error) {
      if (error instanceof InvalidTokenError) throw unauthorized(error.message, 'invalid_token');
      throw error;
    }
    if (!(await clients.isActive(claims.clientId)))
      throw unauthorized('The client of this token no longer exists', 'invalid_token');
    ctx.state.access = claims;
    ctx.state.server = server;
    await next();
  };
}

/** The server's root URL as this request's token names it (its issuer), without a trailing slash. */
export function serverRootOf(ctx: Context): string {
  const server = ctx.state.server as ServerIdentity | undefined;
  if (!server) throw new Error('serverRootOf needs requireToken before it');
  return server.issuer;
}

export function accessOf(ctx: Context): AccessClaims {
  const access = ctx.state.access as AccessClaims | undefined;
  if (!access) throw new Error('accessOf() outside requireToken()');
  return access;
}

/** The caller's project; the root client has none and reads no FHIR data. */
export function projectOf(ctx: Context): string {
  const { projectId } = accessOf(ctx);
  if (!projectId)
    throw fhirError(
      403,
      'forbidden',
      'The root client administers projects; use a project client for FHIR data',
    );
  return projectId;
}

function unauthorized(message: string, error?: string): FhirError {
  const challenge = error ? `Bearer realm="graphir", error="${error}"` : 'Bearer realm="graphir"';
  return new FhirError(401, [{ severity: 'error', code: 'login', diagnostics: message }], {
    'WWW-Authenticate': challenge,
  });
}

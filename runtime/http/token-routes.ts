/**
 * `POST /oauth2/token`: the client credentials grant, with the client's id and secret in the
 * form or in HTTP Basic. Answers and errors as RFC 6749 §5 says.
 * @see https://www.rfc-editor.org/rfc/rfc6749#section-4.4
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { searchableTypes } from '../../generated/search/index.js';
import { ScopeError, Scopes } from '../access/scopes.js';
import type { ClientRegistry } from '../access/client-registry.js';
import type { TokenService } from '../access/token-service.js';
import { grantOf } from '../access/authorize.js';
import type { IdentityOf } from './server-identity.js';

const FIELDS = ['grant_type', 'client_id', 'client_secret', 'scope'];

export function tokenRoutes(
  clients: ClientRegistry,
  tokens: TokenService,
  identityOf: IdentityOf,
): Router {
  const router = new Router();
  router.post('/oauth2/token', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    if (!ctx.is('application/x-www-form-urlencoded')) {
      return oauthError(
        ctx,
        400,
        'invalid_request',
        'The body must be application/x-www-form-urlencoded',
      );
    }
    const form = (ctx.request as { body?: Record<string, unknown> }).body ?? {};
    const field = (name: string) =>
      typeof form[name] === 'string' ? (form[name] as string) : undefined;
    // RFC 6749 §3.1: a parameter may appear once. The form parser makes a repeated (or
    // bracketed) one a list or an object; ignoring it would, for `scope`, grant more than asked.
    const repeated = FIELDS.find((name) => form[name] !== undefined && field(name) === undefined);
    if (repeated)
      return oauthError(ctx, 400, 'invalid_request', `${repeated} must appear once, as text`);
    const grantType = field('grant_type');
    if (!grantType) return oauthError(ctx, 400, 'invalid_request', 'grant_type is required');
    if (grantType !== 'client_credentials') {
      return oauthError(
        ctx,
        400,
        'unsupported_grant_type',
        `grant_type ${grantType} is not supported; use client_credentials`,
      );
    }
    const server = identityOf(ctx);
    if (!server)
      return oauthError(ctx, 400, 'invalid_request', 'The Host header names no valid host');
    const basic = basicCredentials(ctx.get('Authorization'));
    if (basic === null)
      return oauthError(
        ctx,
        400,
        'invalid_request',
        'The Authorization header is not valid HTTP Basic',
      );
    const clientId = basic?.id ?? field('client_id');
    const secret = basic?.secret ?? field('client_secret');
    if (!clientId || !secret)
      return oauthError(
        ctx,
        401,
        'invalid_client',
        'client_id and client_secret are required',
        basic !== undefined,
      );
    // No client id holds U+0000 (PostgreSQL text cannot): such a client is simply unknown.
    const client = clientId.includes('\0')
      ? undefined
      : await clients.authenticate(clientId, secret);
    if (!client)
      return oauthError(
        ctx,
        401,
        'invalid_client',
        'Unknown client or wrong secret',
        basic !== undefined,
      );
    let scopes = client.scopes;
    const requested = field('scope');
    if (requested !== undefined && requested.trim() !== '') {
      try {
        scopes = Scopes.parse(requested);
      } catch (error) {
        return oauthError(ctx, 400, 'invalid_scope', (error as ScopeError).message);
      }
      const unknown = scopes.types().filter((type) => !searchableTypes.has(type));
      if (unknown.length > 0) {
        return oauthError(
          ctx,
          400,
          'invalid_scope',
          `${unknown.join(', ')} is not a resource type`,
        );
      }
      if (!grantOf(client).covers(scopes))
        return oauthError(
          ctx,
          400,
          'invalid_scope',
          `The scope may only narrow what the client was granted (${grantOf(client)})`,
        );
    }
    // A token narrowed below the client's grant is not an admin token: narrowing must not be a
    // way to mint clients wider than the token.
    const admin = client.admin && scopes.covers(client.scopes);
    ctx.body = {
      access_token: await tokens.issue({ ...client, admin }, scopes, server),
      token_type: 'Bearer',
      expires_in: tokens.lifetimeSeconds,
      scope: scopes.toString(),
    };
  });
  return router;
}

/** undefined: no Basic credentials; null: an Authorization header that is not valid Basic. */
function basicCredentials(header: string): { id: string; secret: string } | undefined | null {
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  // RFC 6749 §2.3.1: both parts are form-urlencoded before Base64; a broken escape (`%E0`) is
  // a malformed header like any other.
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon)),
      secret: decodeURIComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return null;
  }
}

function oauthError(
  ctx: Context,
  status: number,
  error: string,
  description: string,
  basic = false,
): void {
  ctx.status = status;
  if (status === 401)
    ctx.set('WWW-Authenticate', basic ? 'Basic realm="graphir"' : 'Basic realm="graphir", Bearer');
  ctx.body = { error, error_description: description };
}

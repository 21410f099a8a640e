/**
 * How GraphQL requests are answered, as GraphQL over HTTP says: in the media type the request
 * prefers of `application/graphql-response+json` and `application/json`, 406 when it accepts
 * neither. `application/json` is also the answer to a request that prefers neither (no Accept,
 * or any type), with the statuses this server has always used. Refusals on the way — from the body
 * parser, the token guard, the routes — are GraphQL `errors` in `application/graphql-response+json`;
 * in `application/json`, a refused token is too, and the rest stay the OperationOutcomes they
 * always were.
 * @see https://graphql.github.io/graphql-over-http/draft/#sec-Body
 * @see https://graphql.github.io/graphql-over-http/draft/#sec-Status-Codes
 */
import type { Context, Middleware } from 'koa';
import { FhirError, fhirError, toFhirError } from '../model/fhir-error.js';
import { refusalError } from './graphql-errors.js';
import { RequestRefused } from './graphql-request.js';
import { isPlaygroundRequest } from './playground-routes.js';
import { FHIR_BASE } from '../model/fhir-base.js';

/** The spec's own type: its statuses say what happened, whoever answered. */
export const GRAPHQL_RESPONSE = 'application/graphql-response+json; charset=utf-8';
/** The legacy type, which clients read only from a 200 (proxies answer errors in JSON too). */
export const JSON_RESPONSE = 'application/json; charset=utf-8';
export type GraphQLMediaType = typeof GRAPHQL_RESPONSE | typeof JSON_RESPONSE;

/** `[base]/$graphql` and the instance level `[base]/{type}/{id}/$graphql`. */
const GRAPHQL_PATH = new RegExp(`^${FHIR_BASE}(?:/[^/]+/[^/]+)?/\\$graphql$`);
const GRAPHQL_METHODS = new Set(['GET', 'HEAD', 'POST']);

/**
 * Mounted before the body parser and the token guard, whose refusals it shapes. Charsets are
 * named in the types offered: a client that asks for `charset=utf-8` (as the spec recommends)
 * gets it, one that asks for another gets 406.
 */
export function graphqlResponses(): Middleware {
  return async (ctx, next) => {
    if (
      !GRAPHQL_METHODS.has(ctx.method) ||
      !GRAPHQL_PATH.test(ctx.path) ||
      isPlaygroundRequest(ctx)
    )
      return next();
    ctx.vary('Accept');
    const accepted = ctx.accepts(JSON_RESPONSE, GRAPHQL_RESPONSE) as GraphQLMediaType | false;
    ctx.state.graphqlMediaType = accepted || JSON_RESPONSE;
    if (!accepted) {
      const error = fhirError(
        406,
        'not-supported',
        'GraphQL answers in application/graphql-response+json or application/json; the Accept header allows neither',
      );
      return respond(ctx, error.status, { errors: [refusalError(error)] });
    }
    try {
      await next();
    } catch (thrown) {
      if (thrown instanceof RequestRefused)
        return respond(ctx, thrown.status, { errors: thrown.errors });
      const unauthenticated = thrown instanceof FhirError && thrown.status === 401;
      if (accepted === JSON_RESPONSE && !unauthenticated) throw thrown;
      const error = toFhirError(thrown);
      if (error.status >= 500) ctx.app.emit('error', thrown, ctx);
      ctx.set(error.headers);
      respond(ctx, error.status, { errors: [refusalError(error)] });
    }
  };
}

/** The media type the answer to this GraphQL request is in. */
export function mediaTypeOf(ctx: Context): GraphQLMediaType {
  return (ctx.state.graphqlMediaType as GraphQLMediaType | undefined) ?? JSON_RESPONSE;
}

export function respond(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = mediaTypeOf(ctx);
  ctx.body = body;
}

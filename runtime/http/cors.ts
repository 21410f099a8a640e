/**
 * CORS on every route, so that web apps served from other origins can call the API. Tokens travel
 * in the Authorization header, never in cookies, so no request is made with credentials: any
 * origin may be allowed by default, and `Access-Control-Allow-Credentials` is never sent.
 * Preflights are answered here, ahead of the token guard, since browsers send them without the
 * Authorization header. A request from an origin not allowed goes on as it would without CORS,
 * answered without `Access-Control-Allow-Origin`, so that the browser withholds the answer.
 * @see https://fetch.spec.whatwg.org/#http-cors-protocol
 */
import cors from '@koa/cors';
import type { Middleware } from 'koa';
import { REQUEST_ID_HEADER } from './request-logging.js';

/** `*` (any origin), or the origins allowed, exactly as browsers send them in `Origin`. */
export type CorsOrigins = '*' | readonly string[];

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Request headers a script may send beyond the CORS-safelisted ones: FHIR's conditional and
 * `Prefer` headers, trace ids, and `X-Medplum`, which MedplumClient sends on every request.
 */
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Prefer',
  'If-Match',
  'If-None-Exist',
  'If-None-Match',
  'If-Modified-Since',
  'Cache-Control',
  REQUEST_ID_HEADER,
  'X-Trace-Id',
  'X-Medplum',
];

/** Response headers a script may read beyond the CORS-safelisted ones. */
const EXPOSED_HEADERS = [
  'Location',
  'Content-Location',
  'ETag',
  'Last-Modified',
  'Retry-After',
  'WWW-Authenticate',
  REQUEST_ID_HEADER,
  'X-Trace-Id',
];

/** How long a browser may reuse a preflight's answer; Chromium keeps one at most two hours. */
const PREFLIGHT_MAX_AGE_SECONDS = 7200;

export function corsHeaders(origins: CorsOrigins): Middleware {
  const allowed = origins === '*' ? undefined : new Set(origins);
  return cors({
    // An empty answer leaves the request without CORS headers: requests without `Origin` (from
    // servers, curl, the same origin) have no use for them. `Vary: Origin` is always sent.
    origin: (ctx) => {
      const origin = ctx.get('Origin');
      if (!origin) return '';
      if (!allowed) return '*';
      return allowed.has(origin) ? origin : '';
    },
    allowMethods: METHODS,
    allowHeaders: ALLOWED_HEADERS,
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
  });
}

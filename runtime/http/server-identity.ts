/**
 * The issuer and audience of the tokens a request may carry. With `GRAPHIR_BASE_URL` set, they
 * come from it alone; without it, from the origin the request was sent to (its protocol and
 * `Host`), as Koa reports them: `X-Forwarded-*` headers are not read, since `app.proxy` is off.
 * See docs/access.md.
 */
import type { Context } from 'koa';
import type { ServerIdentity } from '../access/token-service.js';

/** undefined: the request names no usable host, so no token can be issued or checked for it. */
export type IdentityOf = (ctx: Context) => ServerIdentity | undefined;

/** `baseUrl`: the public root URL, without a trailing slash; `fhirPath`: the FHIR base under it. */
export function serverIdentity(baseUrl: string | undefined, fhirPath: string): IdentityOf {
  const identity = (root: string) => ({ issuer: root, audience: `${root}${fhirPath}` });
  if (baseUrl) {
    const configured = identity(baseUrl);
    return () => configured;
  }
  return (ctx) => {
    const origin = requestOrigin(ctx);
    return origin === undefined ? undefined : identity(origin);
  };
}

/**
 * `http://host:port` as the client addressed the server, in URL's normal form (lower case, no
 * default port), so that `Host: Example.org:80` and `Host: example.org` are one audience.
 */
function requestOrigin(ctx: Context): string | undefined {
  if (!ctx.host) return undefined;
  try {
    const url = new URL(`${ctx.protocol}://${ctx.host}`);
    const onlyHost = url.pathname === '/' && !url.search && !url.hash;
    return onlyHost ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

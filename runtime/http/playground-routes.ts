/**
 * The GraphQL playground: `GET [base]/$graphql` from a browser (it prefers `text/html` and sends
 * no `query` parameter) answers with GraphiQL instead of running a query. The page is static and
 * public; the GraphQL calls it makes carry the user's token. GraphiQL and React come from
 * node_modules and are served under `/playground/assets/`, with versioned names and long cache
 * lifetimes: no CDN. The page and the assets are sent from memory (kept-body.ts).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Router from '@koa/router';
import type { Context } from 'koa';
import { sendKeptBody, sendVersionedFile } from './kept-body.js';
import { FHIR_BASE } from '../model/fhir-base.js';
import { playgroundPage, type PlaygroundAssets } from './playground-page.js';

export const PLAYGROUND_PATH = `${FHIR_BASE}/$graphql`;
export const PLAYGROUND_ASSETS = '/playground/assets';

/**
 * Whether a request is for the playground page rather than a GraphQL query. The token guard lets
 * exactly these requests through, so the test is the same one the route makes: exact path (case
 * and all), GET or HEAD, no `query` parameter, and `text/html` preferred over JSON.
 */
export function isPlaygroundRequest(
  ctx: Pick<Context, 'method' | 'path' | 'URL' | 'accepts'>,
): boolean {
  return (
    (ctx.method === 'GET' || ctx.method === 'HEAD') &&
    ctx.path === PLAYGROUND_PATH &&
    !ctx.URL.searchParams.has('query') &&
    ctx.accepts('application/json', 'text/html') === 'text/html'
  );
}

interface Asset {
  readonly file: string;
  readonly type: string;
  content?: Buffer;
}

const require = createRequire(import.meta.url);

/** A file of an installed package, named with the package's version so it can be cached for good. */
function packageAsset(pkg: string, file: string, type: string): [name: string, asset: Asset] {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const base = file.split('/').pop()!;
  return [`${pkg}-${version}-${base}`, { file: join(dirname(manifest), file), type }];
}

const JS = 'text/javascript; charset=utf-8';

export function playgroundRoutes(): Router {
  const [react, reactDom, graphiqlScript, graphiqlStyle] = [
    packageAsset('react', 'umd/react.production.min.js', JS),
    packageAsset('react-dom', 'umd/react-dom.production.min.js', JS),
    packageAsset('graphiql', 'graphiql.min.js', JS),
    packageAsset('graphiql', 'graphiql.min.css', 'text/css; charset=utf-8'),
  ];
  const assets = new Map([react, reactDom, graphiqlScript, graphiqlStyle]);
  const url = ([name]: [string, Asset]) => `${PLAYGROUND_ASSETS}/${name}`;
  const urls: PlaygroundAssets = {
    react: url(react),
    reactDom: url(reactDom),
    graphiqlScript: url(graphiqlScript),
    graphiqlStyle: url(graphiqlStyle),
  };
  const page = Buffer.from(playgroundPage(urls));

  const router = new Router({ sensitive: true });
  router.get(PLAYGROUND_PATH, (ctx, next) => {
    // The same URL answers JSON or HTML by Accept: caches must keep them apart.
    ctx.vary('Accept');
    if (!isPlaygroundRequest(ctx)) return next();
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    return sendKeptBody(ctx, page);
  });
  router.get(`${PLAYGROUND_ASSETS}/:name`, (ctx) => {
    const asset = assets.get(ctx.params.name);
    const file = asset && {
      type: asset.type,
      content: (asset.content ??= readFileSync(asset.file)),
    };
    return sendVersionedFile(ctx, file, 'No such playground asset');
  });
  return router;
}

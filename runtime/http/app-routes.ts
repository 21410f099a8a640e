/**
 * The web app (app/, built by app/build.ts into dist/app at install time): `GET /` leads to
 * `/app`, and every address under `/app` gets the app's page, which reads the address itself
 * (client-side routing). The built files are read once, when the server starts, and sent from
 * memory (kept-body.ts): the page with `no-cache`, so that a new build is picked up at once, and
 * the assets, whose names carry a hash of their content, with a year's `immutable` lifetime.
 * Nothing is loaded from elsewhere. The page and assets are public; the app's API calls carry
 * the user's token.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import { appPage } from './app-page.js';
import { sendKeptBody, sendVersionedFile } from './kept-body.js';

export const APP_PATH = '/app';
const ASSETS_PATH = `${APP_PATH}/assets`;
const MANIFEST = 'manifest.json';

const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  map: 'application/json; charset=utf-8',
};

/** As app/build.ts writes it: paths relative to the app directory. */
interface AppManifest {
  readonly script: string;
  readonly style: string;
  readonly assets: readonly string[];
}

interface Asset {
  readonly type: string;
  readonly content: Buffer;
}

/** The built app, or why there is none. */
type Build =
  | { readonly page: Buffer; readonly assets: ReadonlyMap<string, Asset> }
  | { readonly missing: string };

/** `dist/app` of the package this file belongs to, whether it runs from source or from dist/. */
export function defaultAppDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, 'dist', 'app');
}

export function appRoutes(appDir: string = defaultAppDir()): Router {
  const build = readBuild(appDir);
  const router = new Router({ sensitive: true, strict: false });
  router.get('/', (ctx) => ctx.redirect(APP_PATH));
  router.get(`${ASSETS_PATH}/:name`, (ctx) => {
    const asset = 'assets' in build ? build.assets.get(ctx.params.name) : undefined;
    return sendVersionedFile(ctx, asset, 'No such file of the web app');
  });
  // Any address under /app but the assets: those the app reads itself.
  router.get(new RegExp(`^${APP_PATH}(?:/(?!assets(?:/|$)).*)?$`), (ctx) => {
    if ('missing' in build) {
      ctx.status = 503;
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = build.missing;
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    return sendKeptBody(ctx, build.page);
  });
  return router;
}

function readBuild(appDir: string): Build {
  const manifestFile = join(appDir, MANIFEST);
  if (!existsSync(manifestFile))
    return {
      missing: `The web app is not built (no ${manifestFile}): run \`npm run build\`.`,
    };
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as AppManifest;
  const assets = new Map<string, Asset>();
  for (const file of manifest.assets) {
    const name = file.slice(file.lastIndexOf('/') + 1);
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
    assets.set(name, { type, content: readFileSync(join(appDir, file)) });
  }
  const url = (file: string) => `${APP_PATH}/${file}`;
  const page = appPage({ script: url(manifest.script), style: url(manifest.style) });
  return { page: Buffer.from(page), assets };
}

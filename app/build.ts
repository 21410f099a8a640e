/**
 * Builds the web app (app/src, React and CodeMirror) into dist/app with esbuild: minified ES
 * modules under `assets/`, each named by a hash of its content so that the server can let
 * browsers keep them for good, and `manifest.json` naming the entry script and style sheet,
 * from which the server writes the page (runtime/http/app-routes.ts). `npm run build` (and so
 * `npm install`) runs it; `tsx app/build.ts [outDir]` too.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { loadSearchDefinition, searchableTypes } from '../generated/search/index.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_APP_DIR = join(ROOT, 'dist/app');
export const MANIFEST = 'manifest.json';

/** Paths relative to the app directory. */
export interface AppManifest {
  readonly script: string;
  readonly style: string;
  /** Every file of the build under `assets/`, the entry's included. */
  readonly assets: readonly string[];
}

export async function buildApp(outDir: string = DEFAULT_APP_DIR): Promise<AppManifest> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(ROOT, 'app/src/main.tsx') },
    outdir: join(outDir, 'assets'),
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    jsx: 'automatic',
    minify: true,
    legalComments: 'none',
    define: { 'process.env.NODE_ENV': '"production"' },
    plugins: [reverseReferences],
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const [entry, meta] = outputs.find(([, output]) => output.entryPoint !== undefined)!;
  if (!meta.cssBundle) throw new Error('The app build made no style sheet');
  const name = (path: string) => relative(outDir, resolve(path)).split('\\').join('/');
  const manifest: AppManifest = {
    script: name(entry),
    style: name(meta.cssBundle),
    assets: outputs.map(([path]) => name(path)).sort(),
  };
  await writeFile(join(outDir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/**
 * `graphir:reverse-references`: for each resource type, the search parameters of other types
 * that may refer to it (`{Patient: {Observation: ['subject', …], …}}`), from the generated
 * search maps. The resource view loads it (a chunk of its own, ~40 KB gzipped) only when its
 * References tab opens.
 */
const reverseReferences: Plugin = {
  name: 'reverse-references',
  setup(builder) {
    builder.onResolve({ filter: /^graphir:reverse-references$/ }, (args) => ({
      path: args.path,
      namespace: 'graphir',
    }));
    builder.onLoad({ filter: /.*/, namespace: 'graphir' }, () => {
      const byTarget: Record<string, Record<string, string[]>> = {};
      for (const source of [...searchableTypes].sort()) {
        for (const parameter of Object.values(loadSearchDefinition(source).parameters)) {
          if (parameter.type !== 'reference') continue;
          for (const target of parameter.targets ?? []) {
            const sources = (byTarget[target] ??= {});
            (sources[source] ??= []).push(parameter.code);
          }
        }
      }
      return { contents: JSON.stringify(byTarget), loader: 'json' };
    });
  },
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = resolve(process.argv[2] ?? DEFAULT_APP_DIR);
  const manifest = await buildApp(outDir);
  console.log(
    `Built the web app into ${relative(process.cwd(), outDir) || '.'}: ${manifest.script}`,
  );
}

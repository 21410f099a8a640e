/**
 * npm run bench:app — the web app's figures for docs/app.md:
 *   - the build's files, raw, gzip -9 and brotli at quality 6 (as the server compresses them);
 *   - the counts the app asks for in one batch Bundle (every type's count; a Patient's reverse
 *     references), against the same searches sent one by one, six at a time (a browser's limit
 *     per server), on PGlite with the 10-patient sample data. Medians of 7 runs.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { buildApp } from '../app/build.js';
import { loadSearchDefinition, searchableTypes } from '../generated/search/index.js';
import { startTestServer } from '../test/support/test-server.js';
import { transactionBundles } from './synthetic-dataset.js';

const RUNS = 7;
const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;

const dir = mkdtempSync(join(tmpdir(), 'graphir-app-bench-'));
const manifest = await buildApp(dir);
for (const file of manifest.assets) {
  const bytes = readFileSync(join(dir, file));
  const gzip = gzipSync(bytes, { level: 9 }).length;
  const brotli = brotliCompressSync(bytes, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 6 },
  }).length;
  console.log(`${file}: ${kb(bytes.length)} raw, ${kb(gzip)} gzip, ${kb(brotli)} brotli`);
}
rmSync(dir, { recursive: true, force: true });

const server = await startTestServer('pglite', { LOG_LEVEL: 'silent' });
for (const bundle of transactionBundles(10, Number.MAX_SAFE_INTEGER))
  await server.fhir('', { method: 'POST', body: bundle });
const batch = (urls: readonly string[]) => ({
  resourceType: 'Bundle',
  type: 'batch',
  entry: urls.map((url) => ({ request: { method: 'GET', url } })),
});
const median = async (run: () => Promise<unknown>) => {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[RUNS >> 1].toFixed(0);
};
const compare = async (label: string, searches: readonly string[]) => {
  const together = await median(async () =>
    (await server.fhir('', { method: 'POST', body: batch(searches) })).json(),
  );
  const apart = await median(async () => {
    const queue = [...searches];
    const next = async (): Promise<void> => {
      const search = queue.shift();
      if (search === undefined) return;
      await (await server.fhir(`/${search}`)).json();
      return next();
    };
    await Promise.all(Array.from({ length: 6 }, next));
  });
  console.log(`${label}, ${searches.length} counts: one batch ${together} ms, apart ${apart} ms`);
};

const types = [...searchableTypes];
await compare(
  'every type',
  types.map((type) => `${type}?_summary=count`),
);
const patient = (await (await server.fhir('/Patient?_count=1')).json()).entry[0].resource.id;
await compare(
  'reverse references of a Patient',
  types.flatMap((source) =>
    Object.values(loadSearchDefinition(source).parameters)
      .filter((p) => p.type === 'reference' && p.targets?.includes('Patient'))
      .map((p) => `${source}?${p.code}=Patient/${patient}&_summary=count`),
  ),
);
await server.stop();

/**
 * npm run bench — prints, for the whole of R4:
 *   - full generation time (spec/ → rendered generated/ files, not written);
 *   - size of the generated SDL and of generated/;
 *   - time from process start until the executable schema is ready, and the heap it holds
 *     (fresh `node` processes running the built runtime; medians of several runs);
 *   - time from process start until `GET /healthz` answers, and that process's memory.
 * Needs `npm run build` first (npm install does it). Figures are medians: these machines are noisy.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from '../generator/generate.js';
import { writeGenerated } from '../generator/write.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const started = performance.now();
const files = generate('spec');
await writeGenerated('generated', files, { check: true });
const generationSeconds = (performance.now() - started) / 1000;

const sdlBytes = sizeOf('generated/graphql', (name) => name.endsWith('.graphql'));
const generatedBytes = sizeOf('generated', () => true);

const ready = Array.from({ length: RUNS }, () => schemaReady());
// The first start creates the embedded database in an empty DATA_DIR; later starts reopen it.
const dataDir = mkdtempSync(join(tmpdir(), 'graphir-bench-'));
const firstStart = await firstHealthz(dataDir);
const served = [];
for (let i = 0; i < RUNS; i++) served.push(await firstHealthz(dataDir));
rmSync(dataDir, { recursive: true, force: true });

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
console.log(`generation (${files.length} files):        ${generationSeconds.toFixed(1)} s`);
console.log(`generated SDL:                      ${mb(sdlBytes)}`);
console.log(`generated/ in all:                  ${mb(generatedBytes)}`);
console.log(
  `process start → schema ready:       median ${median(ready.map((r) => r.ms)).toFixed(0)} ms (runs: ${ready.map((r) => r.ms.toFixed(0)).join(', ')})`,
);
console.log(`heap held by the schema (after GC): median ${mb(median(ready.map((r) => r.heap)))}`);
console.log(
  `process start → GET /healthz 200:   median ${median(served.map((r) => r.ms)).toFixed(0)} ms, RSS ${mb(median(served.map((r) => r.rss)))} (PGlite data directory reopened)`,
);
console.log(
  `  first start on an empty DATA_DIR:  ${firstStart.ms.toFixed(0)} ms (PGlite creates its database)`,
);
console.log(
  'Medplum, same kind of machine: schema 2.6 s and ~500 MB heap; first GraphQL answer 3.9 s after start, ~400 MB.',
);

/** A fresh process builds the schema and reports its uptime and heap. */
function schemaReady(): { ms: number; heap: number } {
  const script = `
    const { buildExecutableSchema } = await import('./dist/runtime/graphql/build-executable-schema.js');
    const schema = buildExecutableSchema();
    const ms = process.uptime() * 1000;
    globalThis.gc();
    console.log(JSON.stringify({ ms, heap: process.memoryUsage().heapUsed, types: Object.keys(schema.getTypeMap()).length }));`;
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

/** `node dist/runtime/main.js` on a free port, on PGlite in `dataDir`: time from spawn until /healthz answers 200. */
async function firstHealthz(dataDir: string): Promise<{ ms: number; rss: number }> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const spawned = performance.now();
  const child = spawn(process.execPath, ['dist/runtime/main.js'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
    },
    stdio: 'ignore',
  });
  try {
    for (;;) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (response.status === 200) break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      if (performance.now() - spawned > 30_000)
        throw new Error('the server did not answer within 30 s');
    }
    const ms = performance.now() - spawned;
    const rss =
      Number(
        execFileSync('ps', ['-o', 'rss=', '-p', String(child.pid)], { encoding: 'utf8' }).trim(),
      ) * 1024;
    return { ms, rss };
  } finally {
    child.kill('SIGTERM');
  }
}

function sizeOf(dir: string, include: (name: string) => boolean): number {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter(include)
    .map((name) => statSync(join(dir, name)))
    .filter((stat) => stat.isFile())
    .reduce((sum, stat) => sum + stat.size, 0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

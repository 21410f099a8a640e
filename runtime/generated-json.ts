/**
 * Reads the data files that `npm run generate` writes as JSON (schema pieces, resolver wiring,
 * search and type definitions). V8 parses JSON several times faster than the same data as
 * JavaScript object literals, which keeps start-up within budget. Each file is
 * `{"//": "<do-not-edit header>", "data": …}`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const generatedDir = join(findProjectRoot(dirname(fileURLToPath(import.meta.url))), 'generated');

export function readGeneratedJson<T>(path: string): T {
  return (JSON.parse(readFileSync(generatedPath(path), 'utf8')) as { data: T }).data;
}

/** A file or folder under generated/ (`graphql/Patient.graphql`). */
export function generatedPath(path: string): string {
  return join(generatedDir, path);
}

/** The folder holding package.json: the same from runtime/ (tsx) and from dist/runtime/ (built). */
function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'generated'))) return dir;
    if (dirname(dir) === dir) throw new Error(`No generated/ folder above ${from}`);
  }
}

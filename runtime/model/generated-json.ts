/**
 * Reads the data files that `npm run generate` writes as JSON (schema pieces, resolver wiring,
 * search and type definitions). V8 parses JSON several times faster than the same data as
 * JavaScript object literals, which keeps start-up within budget. Each file is
 * `{"//": "<do-not-edit header>", "data": …}`.
 */
import { readFileSync } from 'node:fs';
import { projectPath } from './project-path.js';

export function readGeneratedJson<T>(path: string): T {
  return (JSON.parse(readFileSync(generatedPath(path), 'utf8')) as { data: T }).data;
}

/** A file or folder under generated/ (`graphql/Patient.graphql`). */
export function generatedPath(path: string): string {
  return projectPath(`generated/${path}`);
}

/**
 * Files the runtime reads from the project at run time (generated/ data, SQL migrations) are
 * found from the project root, which is the same whether the code runs from runtime/ (tsx) or
 * from dist/runtime/ (built): the nearest folder above holding package.json and generated/.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = findProjectRoot(dirname(fileURLToPath(import.meta.url)));

/** `projectPath('runtime/store/migrations')` → that folder's absolute path. */
export function projectPath(relative: string): string {
  return join(root, relative);
}

function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'generated'))) return dir;
    if (dirname(dir) === dir)
      throw new Error(`No project (package.json and generated/) above ${from}`);
  }
}

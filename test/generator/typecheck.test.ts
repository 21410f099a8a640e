/**
 * `tsc --noEmit` over the whole project, generated/ included: generated code must compile
 * against the runtime types it imports.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('tsc --noEmit -p tsconfig.json', () => {
  it('exits 0', { timeout: 120_000 }, async () => {
    const result = await run('node_modules/.bin/tsc', ['--noEmit', '-p', 'tsconfig.json'], {
      maxBuffer: 64 * 1024 * 1024,
    }).then(
      ({ stdout }) => ({ code: 0, output: stdout }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({
        code: error.code ?? -1,
        output: `${error.stdout ?? ''}${error.stderr ?? ''}`,
      }),
    );
    expect(result.output.trim(), 'tsc reported errors').toBe('');
    expect(result.code).toBe(0);
  });
});

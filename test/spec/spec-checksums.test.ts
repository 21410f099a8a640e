import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const readme = readFileSync('spec/README.md', 'utf8');
const listed = new Map(
  [...readme.matchAll(/^\|\s*([\w/.-]+\.json)\s*\|\s*([0-9a-f]{64})\s*\|/gm)].map(
    ([, file, sha]) => [file, sha],
  ),
);
const files = readdirSync('spec', { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.json'))
  .sort();

describe('spec/README.md checksums', () => {
  it('lists every definition file in spec/', () => {
    expect([...listed.keys()].sort()).toEqual(files);
  });

  it.each(files)('%s matches its listed sha256', (file) => {
    const sha = createHash('sha256')
      .update(readFileSync(`spec/${file}`))
      .digest('hex');
    expect(sha).toBe(listed.get(file));
  });
});

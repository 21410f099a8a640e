import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { bufferedDestination, LOG_FLUSH_MS } from '../../runtime/observability/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'graphir-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const linesIn = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};
async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) return false;
    await sleep(5);
  }
  return true;
}

describe('buffered log lines (LOG_BUFFER_BYTES)', () => {
  it('holds a line back until the flush interval, then writes it', async () => {
    const file = join(dir, 'interval.log');
    const destination = bufferedDestination(file, 4096);
    const logger = pino({ base: null }, destination);
    logger.info('one line');
    await sleep(LOG_FLUSH_MS / 5);
    expect(linesIn(file)).toEqual([]);
    expect(await until(() => linesIn(file).length === 1, LOG_FLUSH_MS * 8)).toBe(true);
    expect(JSON.parse(linesIn(file)[0]).msg).toBe('one line');
    destination.end();
  });

  it('writes as soon as a buffer is full, without waiting for the interval', async () => {
    const file = join(dir, 'full.log');
    const destination = bufferedDestination(file, 4096, 60_000);
    const logger = pino({ base: null }, destination);
    logger.info('short');
    await sleep(50);
    expect(linesIn(file)).toEqual([]);
    for (let i = 0; i < 60; i++) logger.info({ i, padding: 'x'.repeat(60) }, 'filler');
    // About 7 KB: the first 4 KB or so go at once, the rest waits for the next full buffer.
    expect(await until(() => linesIn(file).length > 0, 5_000)).toBe(true);
    await sleep(50);
    const written = linesIn(file);
    expect(JSON.parse(written[0]).msg).toBe('short');
    expect(written.length).toBeGreaterThan(20);
    expect(written.length).toBeLessThan(61);
    destination.end();
  });

  it('writes what waits when the process exits', () => {
    const script = `
      import { createLogger } from './runtime/observability/logger.ts';
      const logger = createLogger({ level: 'info', bufferBytes: 4096 });
      for (let i = 0; i < 3; i++) logger.info({ i }, 'last words');
      process.exit(0);`;
    const stdout = execFileSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { encoding: 'utf8', env: { ...process.env, VITEST: '' } },
    );
    const lines = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => [line.msg, line.i])).toEqual([
      ['last words', 0],
      ['last words', 1],
      ['last words', 2],
    ]);
  });
});

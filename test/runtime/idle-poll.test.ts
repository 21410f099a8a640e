/**
 * After a request is answered, the event loop keeps turning for at most the set time
 * (runtime/http/idle-poll.ts), not at all while the sandbox workers are busy, and not at all
 * when it is 0.
 */
import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { countImmediates } from '../support/immediates.js';
import { idlePoll } from '../../runtime/http/idle-poll.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const immediates = countImmediates();

/** One request through the middleware, its handler doing nothing. */
const answer = (middleware: ReturnType<typeof idlePoll>) =>
  middleware({} as Context, () => Promise.resolve());

describe('idle polling', () => {
  it('keeps the loop turning after a request, and stops after the set time', async () => {
    await answer(idlePoll(5_000, () => false));
    await sleep(2);
    expect(immediates.count).toBeGreaterThan(0);
    await sleep(20);
    const stopped = immediates.count;
    await sleep(10);
    expect(immediates.count).toBe(stopped);
  });

  it('starts again from each request', async () => {
    const middleware = idlePoll(5_000, () => false);
    await answer(middleware);
    await sleep(20);
    const stopped = immediates.count;
    await answer(middleware);
    await sleep(2);
    expect(immediates.count).toBeGreaterThan(stopped);
  });

  it('stops as soon as the sandbox workers are busy, and never starts while they are', async () => {
    let busy = false;
    await answer(idlePoll(1_000_000, () => busy));
    await sleep(5);
    expect(immediates.count).toBeGreaterThan(0);
    busy = true;
    await sleep(1);
    const stopped = immediates.count;
    await sleep(10);
    expect(immediates.count).toBe(stopped);
    immediates.reset();
    await answer(idlePoll(1_000_000, () => true));
    await sleep(5);
    expect(immediates.count).toBeLessThanOrEqual(1);
  });

  it('never polls when set to 0', async () => {
    await answer(idlePoll(0, () => false));
    await sleep(5);
    expect(immediates.count).toBe(0);
  });
});

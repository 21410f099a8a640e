/**
 * Counts the immediates scheduled during each test of the file that calls it: the turns of the
 * event loop a poller (store/busy-poll.ts, http/idle-poll.ts) takes instead of sleeping.
 */
import { afterEach, beforeEach } from 'vitest';

export interface ImmediatesCount {
  /** Immediates scheduled since the test began, or since `reset()`. */
  readonly count: number;
  reset(): void;
}

export function countImmediates(): ImmediatesCount {
  let count = 0;
  const original = globalThis.setImmediate;
  beforeEach(() => {
    count = 0;
    globalThis.setImmediate = ((...args: Parameters<typeof setImmediate>) => {
      count++;
      return original(...args);
    }) as typeof setImmediate;
  });
  afterEach(() => {
    globalThis.setImmediate = original;
  });
  return {
    get count() {
      return count;
    },
    reset: () => {
      count = 0;
    },
  };
}

/**
 * After answering a request, the event loop keeps turning (an empty immediate at a time) for up
 * to a set time, instead of sleeping until the next request comes. On a virtual machine a thread
 * that sleeps between requests wakes on a CPU that went idle meanwhile, its caches cold: the
 * same GraphQL query run in one process took 0.27 ms back to back, 0.30 ms with the loop spinning
 * 0.5 ms between runs, and 0.38 ms with it sleeping 1 ms between them (bench Q3 on PGlite).
 * Over HTTP at concurrency 1 (alternating server runs, 3,000 requests each, 0 against 500 µs):
 * PGlite Q1 0.29 → 0.18 ms, Q3 0.84 → 0.77, Q4 0.38 → 0.26; PostgreSQL Q1 0.55 → 0.41, Q3
 * 0.84–0.87 → 0.72–0.76, Q4 0.70–0.71 → 0.59–0.60. Under load the loop seldom sleeps, so it
 * changes nothing there. store/busy-poll.ts does the same while a statement is out at PostgreSQL.
 *
 * Not while `busy()`: the sandbox workers need the cores then (the worker that ran a bot prepares
 * its next isolate just after answering); polling made a bot echo at concurrency 1 on PGlite
 * 0.56–0.58 → 0.71–0.77 ms. The cost is up to `microseconds` of one core's time after each
 * request that the next does not follow sooner; 0 turns it off.
 */
import type { Middleware } from 'koa';
import { LoopPoll } from '../loop-poll.js';

export function idlePoll(microseconds: number, busy: () => boolean): Middleware {
  if (microseconds <= 0) return (_ctx, next) => next();
  const loop = new LoopPoll(() => !busy());
  return async (_ctx, next) => {
    try {
      await next();
    } finally {
      // Koa writes the response once this returns; the first turn comes after that.
      loop.extend(microseconds / 1000);
    }
  };
}

import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { cpuPerRequest, threadCpu } from '../../bench/thread-cpu.js';

/**
 * A fixed amount of work, some tens of ms of CPU: a fixed time would get less CPU when the test
 * runs beside others on a busy machine. As source, so that a worker runs the same.
 */
const WORK = `let x = 0; for (let i = 0; i < 20_000_000; i++) x = (x + i * i) % 1_000_003;`;
const work = new Function(`${WORK} return x;`) as () => number;

/** The whole process's CPU (all threads), in ms. */
function processCpu(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

describe('threadCpu', () => {
  it("counts this process's main thread's work as main", () => {
    const before = threadCpu(process.pid);
    const processBefore = processCpu();
    work();
    const after = threadCpu(process.pid);
    const used = processCpu() - processBefore;
    expect(used).toBeGreaterThan(10);
    expect(after.main - before.main).toBeGreaterThanOrEqual(0.8 * used);
  });

  it("counts another thread's work as others", async () => {
    const before = threadCpu(process.pid);
    const processBefore = processCpu();
    // This thread waits meanwhile: what the process uses is the worker's. The worker stays
    // until it is terminated: a thread that has ended takes its time with it.
    const worker = new Worker(
      `${WORK} const { parentPort } = require('node:worker_threads');
       parentPort.postMessage(x);
       parentPort.once('message', () => {});`,
      { eval: true },
    );
    await new Promise((resolve) => worker.once('message', resolve));
    const after = threadCpu(process.pid);
    const used = processCpu() - processBefore;
    await worker.terminate();
    const main = after.main - before.main;
    expect(used).toBeGreaterThan(10);
    expect(after.others - before.others).toBeGreaterThanOrEqual(0.8 * (used - main));
    expect(after.others - before.others).toBeGreaterThan(main);
  });

  it('divides the difference by the requests', () => {
    const perRequest = cpuPerRequest({ main: 10, others: 4 }, { main: 30, others: 8 }, 400);
    expect(perRequest).toEqual({ main: 0.05, others: 0.01 });
  });
});

import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { cpuPerRequest, threadCpu } from '../../bench/thread-cpu.js';

/** Keeps the calling thread on the CPU for `ms`. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('threadCpu', () => {
  it("counts this process's main thread's work as main", () => {
    const before = threadCpu(process.pid);
    const started = performance.now();
    spin(60);
    const after = threadCpu(process.pid);
    const elapsed = performance.now() - started;
    expect(after.main - before.main).toBeGreaterThanOrEqual(50);
    expect(after.main - before.main).toBeLessThanOrEqual(elapsed + 1);
  });

  it("counts another thread's work as others", async () => {
    const before = threadCpu(process.pid);
    const worker = new Worker(
      `const until = performance.now() + 60; while (performance.now() < until);
       require('node:worker_threads').parentPort.postMessage('done');`,
      { eval: true },
    );
    await new Promise((resolve) => worker.once('message', resolve));
    const after = threadCpu(process.pid);
    await worker.terminate();
    expect(after.others - before.others).toBeGreaterThanOrEqual(50);
  });

  it('divides the difference by the requests', () => {
    const perRequest = cpuPerRequest({ main: 10, others: 4 }, { main: 30, others: 8 }, 400);
    expect(perRequest).toEqual({ main: 0.05, others: 0.01 });
  });
});

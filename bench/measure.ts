/** Timing helpers shared by the HTTP benchmarks. */
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import type { LoadClient, LoadJob, LoadRequest } from './load-client.js';
import type { ThreadCpu } from './thread-cpu.js';

export interface Figures {
  readonly p50: number;
  readonly p99: number;
  readonly rps: number;
  /** Per request, of the serving process's threads, when the job named it (`serverPid`). */
  readonly cpu?: ThreadCpu;
}

/** What the load client sends the floor. */
const FLOOR_REQUESTS: LoadRequest[] = [{ method: 'GET', path: '/' }];

/** `requests` calls spread over `concurrency` loops, after a short warm-up. */
export async function measure(
  requests: number,
  concurrency: number,
  request: () => Promise<unknown>,
): Promise<Figures> {
  for (let i = 0; i < 20; i++) await request();
  const times: number[] = [];
  let remaining = requests;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (remaining-- > 0) {
        const t0 = performance.now();
        await request();
        times.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { p50: percentile(times, 50), p99: percentile(times, 99), rps: times.length / seconds };
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** The floor's figures at `concurrency`, printed with `label` in front. */
export async function measureFloor(
  client: LoadClient,
  floor: { url: string },
  count: number,
  concurrency: number,
  label: string,
): Promise<Figures> {
  const figures = await timeFloor(client, floor, count, concurrency);
  console.log(
    `${label} floor (trivial Koa)  p50 ${figures.p50.toFixed(2)} ms  p99 ${figures.p99.toFixed(2)} ms  ${figures.rps.toFixed(0)} req/s`,
  );
  return figures;
}

/**
 * Sends the floor `count` untimed requests at concurrency 4, as the benches warm the server before
 * timing it. V8 compiles a handler in tiers, the floor's included: timed after only its 2,200
 * requests at concurrency 1, it answered 5,149 requests/s at 16, and 13,495–22,064 after a few
 * thousand more (2026-11-25), so a cold floor made the server's ratio to it look better.
 */
export async function warmUpFloor(
  client: LoadClient,
  floor: { url: string },
  count: number,
): Promise<void> {
  await timeFloor(client, floor, count, 4);
}

/** The floor runs in this process (`startFloor`): its CPU is this process's. */
function timeFloor(
  client: LoadClient,
  floor: { url: string },
  count: number,
  concurrency: number,
): Promise<Figures> {
  return client.measure({
    url: floor.url,
    requests: FLOOR_REQUESTS,
    count,
    concurrency,
    serverPid: process.pid,
  });
}

/** The floor: a trivial Koa handler on this machine, measured the same way. */
export async function startFloor(): Promise<{ url: string; close(): void }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { ok: true };
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => server.close(),
  };
}

export interface FloorRatios {
  /** Each round's p50 over the floor's p50 just before it. */
  readonly latency: readonly number[];
  /** Each round's requests per second over the floor's just before it. */
  readonly throughput: readonly number[];
  /** Each round's CPU per request: the floor's process, and the job's server (`serverPid`). */
  readonly floorCpu: readonly ThreadCpu[];
  readonly serverCpu: readonly ThreadCpu[];
}

/**
 * `job` and the floor measured in turn, `rounds` times, each at the job's concurrency: a ratio per
 * round against the floor just before it. On these shared machines the floor alone answered
 * 22,031 requests/s at concurrency 16 in one bench:graphql run and 37,418 in the same run a few
 * minutes later (2026-11-25), so one floor figure against one query's can read as a target met or
 * missed by chance; the spread over rounds shows how far to trust it. Each round also reads the
 * CPU per request of the server (`serverPid`) and of the floor.
 */
export async function againstFloor(
  client: LoadClient,
  floor: { url: string },
  job: Omit<LoadJob, 'warmup' | 'serverPid'> & { readonly serverPid: number },
  rounds: number,
): Promise<FloorRatios> {
  const latency: number[] = [];
  const throughput: number[] = [];
  const floorCpu: ThreadCpu[] = [];
  const serverCpu: ThreadCpu[] = [];
  for (let round = 0; round < rounds; round++) {
    const base = await timeFloor(client, floor, job.count, job.concurrency);
    const figures = await client.measure(job);
    latency.push(figures.p50 / base.p50);
    throughput.push(figures.rps / base.rps);
    // Both jobs name the process that serves them, so the load client measured both.
    floorCpu.push(base.cpu!);
    serverCpu.push(figures.cpu!);
  }
  return { latency, throughput, floorCpu, serverCpu };
}

/**
 * The rounds' CPU per request, medians: the server's main thread and its other threads (sandbox
 * workers, V8's helpers, libuv's pool), and the floor's process. Every request passes through the
 * main thread, so beside the floor's figure it bounds what share of the floor's throughput the
 * server can reach on two cores that the load client uses too.
 */
export function cpuLine({ floorCpu, serverCpu }: FloorRatios): string {
  const median = (values: number[]) => percentile(values, 50).toFixed(3);
  const total = (cpu: ThreadCpu) => cpu.main + cpu.others;
  return `CPU per request (medians): the server's main thread ${median(serverCpu.map((cpu) => cpu.main))} ms, its other threads ${median(serverCpu.map((cpu) => cpu.others))} ms; the floor's process ${median(floorCpu.map(total))} ms`;
}

/** `values` as "lowest–highest (median m)", each formatted by `format`. */
export function spread(values: readonly number[], format: (value: number) => string): string {
  const sorted = [...values].sort((a, b) => a - b);
  const median = percentile(sorted, 50);
  return `${format(sorted[0])}–${format(sorted[sorted.length - 1])} (median ${format(median)})`;
}

/**
 * HTTP load from a separate process (bench/load-client-process.ts): measuring from the server's
 * own process would count the client's work, on the same event loop, as the server's latency.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { percentile, type Figures } from './measure.js';
import type { ThreadCpu } from './thread-cpu.js';

export interface LoadRequest {
  readonly method: string;
  /** Appended to the job's URL. */
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** The status every answer must have; 200 by default. */
  readonly status?: number;
  /** Text that must not appear in the answer (e.g. `"errors"` for GraphQL). */
  readonly refuse?: string;
}

export interface LoadJob {
  readonly url: string;
  /** Sent in turn, round and round. */
  readonly requests: readonly LoadRequest[];
  readonly count: number;
  readonly concurrency: number;
  readonly warmup: number;
  /** The process that serves the job: its threads' CPU per timed request comes back as `cpu`. */
  readonly serverPid?: number;
}

export type LoadResult =
  | {
      readonly latencies: number[];
      readonly seconds: number;
      readonly cpu?: ThreadCpu;
      readonly error?: undefined;
    }
  | { readonly error: string };

export class LoadClient {
  private readonly child: ChildProcess = fork(
    fileURLToPath(new URL('./load-client-process.ts', import.meta.url)),
    { execArgv: ['--import', 'tsx'], stdio: 'inherit' },
  );

  async measure(job: Omit<LoadJob, 'warmup'> & { warmup?: number }): Promise<Figures> {
    this.child.send({ warmup: 200, ...job });
    const [result] = (await once(this.child, 'message')) as [LoadResult];
    if (result.error !== undefined) throw new Error(result.error);
    return {
      p50: percentile(result.latencies, 50),
      p99: percentile(result.latencies, 99),
      rps: result.latencies.length / result.seconds,
      cpu: result.cpu,
    };
  }

  close(): void {
    this.child.kill();
  }
}

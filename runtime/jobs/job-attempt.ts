/**
 * One attempt of a job taken from either queue: its kind runs it, the metrics count it, and a
 * failed last attempt abandons the job. Both queues run jobs through here, so they behave alike.
 */
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { JobKind } from './job-queue.js';

export interface TakenJob {
  readonly id: string;
  readonly kind: string;
  readonly payload: unknown;
  /** This attempt's number: attempts are counted when a job is taken. */
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly createdAt: Date;
}

export interface AttemptDeps {
  readonly metrics?: Metrics;
  readonly logger?: Logger;
}

/**
 * Runs the attempt. Resolves when the job is done with, completed or abandoned (the queue then
 * deletes it); throws the attempt's error when it is to be tried again.
 */
export async function runAttempt(
  kind: JobKind<unknown>,
  job: TakenJob,
  { metrics, logger }: AttemptDeps,
): Promise<void> {
  const labels = { kind: job.kind };
  if (job.attempts === 1) metrics?.jobWait.observe(labels, (Date.now() - +job.createdAt) / 1000);
  metrics?.jobsRunning.inc(labels);
  try {
    await kind.run(job.payload, {
      jobId: job.id,
      attempt: job.attempts,
      maxAttempts: job.maxAttempts,
    });
    metrics?.jobAttempts.inc({ ...labels, outcome: 'completed' });
  } catch (error) {
    const reason = (error as Error)?.message ?? String(error);
    const fields = { jobId: job.id, kind: job.kind, attempt: job.attempts, err: error };
    if (job.attempts < job.maxAttempts) {
      metrics?.jobAttempts.inc({ ...labels, outcome: 'retried' });
      logger?.warn(fields, 'job attempt failed; it will be tried again');
      throw error;
    }
    // An abandon that throws leaves the job exhausted in the table: the sweep abandons it later.
    await kind.abandon(job.payload, `Failed ${job.attempts} times; the last error: ${reason}`);
    metrics?.jobAttempts.inc({ ...labels, outcome: 'failed' });
    logger?.error(fields, 'job failed on its last attempt and is abandoned');
  } finally {
    metrics?.jobsRunning.dec(labels);
  }
}

/** A job left exhausted by a process that died on its last attempt. */
export async function abandonStranded(
  kind: JobKind<unknown>,
  job: { readonly id: string; readonly kind: string; readonly payload: unknown },
  { metrics, logger }: AttemptDeps,
): Promise<void> {
  await kind.abandon(
    job.payload,
    'The process running its last attempt stopped before the attempt ended',
  );
  metrics?.jobAttempts.inc({ kind: job.kind, outcome: 'failed' });
  logger?.error({ jobId: job.id, kind: job.kind }, 'job stranded on its last attempt; abandoned');
}

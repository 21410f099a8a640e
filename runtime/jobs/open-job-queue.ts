/**
 * The queue for the database's engine: graphile-worker on PostgreSQL, the embedded runner on
 * PGlite (docs/jobs.md). Its queued jobs are what `graphir_jobs_queued` reports.
 */
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Database } from '../store/database.js';
import { EmbeddedJobQueue } from './embedded-queue.js';
import { GraphileJobQueue } from './graphile-queue.js';
import type { JobQueue, JobSettings } from './job-queue.js';

export interface JobQueueOptions {
  readonly logger?: Logger;
  readonly metrics?: Metrics;
  /** How long stopping lets running jobs end before they are cancelled. */
  readonly shutdownMs?: number;
}

export function openJobQueue(
  db: Database,
  settings: JobSettings,
  { logger, metrics, shutdownMs }: JobQueueOptions = {},
): JobQueue {
  const deps = { ...(logger ? { logger } : {}), ...(metrics ? { metrics } : {}) };
  let queue: JobQueue;
  if (db.engine === 'pglite') queue = new EmbeddedJobQueue(db, settings, deps);
  else {
    // graphile-worker opens connections of its own, to the same database.
    if (!db.sessionUrl) throw new Error('The job queue on PostgreSQL needs the database URL');
    queue = new GraphileJobQueue(settings, {
      url: db.sessionUrl,
      ...deps,
      ...(shutdownMs === undefined ? {} : { shutdownMs }),
    });
  }
  metrics?.countQueuedJobs(() => queue.queued());
  return queue;
}

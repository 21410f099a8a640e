/**
 * Bot executions, fairly across projects. Each project runs at most `concurrency` executions at
 * once in the sandbox pool and queues at most `queued` more; past that its requests are refused
 * with 429. A project that floods the pool with long-running bots therefore holds at most
 * `concurrency` workers: with the default (one worker fewer than the pool has), another project's
 * execution always finds a worker, and waits behind at most `concurrency` executions of each
 * other project, never behind a project's whole queue.
 */
import { FhirError } from '../model/fhir-error.js';

export interface SchedulerLimits {
  /** Executions of one project running at once. */
  readonly concurrency: number;
  /** Executions of one project waiting for one of those places; more are refused. */
  readonly queued: number;
}

interface ProjectQueue {
  running: number;
  readonly waiting: (() => void)[];
}

/** How long a refused client should wait before trying again, in seconds. */
const RETRY_AFTER_SECONDS = 1;

export class ProjectScheduler {
  private readonly projects = new Map<string, ProjectQueue>();

  constructor(private readonly limits: SchedulerLimits) {}

  /** Runs `work` when the project has a place; throws a 429 FhirError when its queue is full. */
  async run<T>(projectId: string, work: () => Promise<T>): Promise<T> {
    const project = this.projects.get(projectId) ?? { running: 0, waiting: [] };
    this.projects.set(projectId, project);
    if (project.running >= this.limits.concurrency) {
      if (project.waiting.length >= this.limits.queued) throw tooMany(this.limits);
      await new Promise<void>((resolve) => project.waiting.push(resolve));
    } else {
      project.running++;
    }
    try {
      return await work();
    } finally {
      // The place goes to the project's next execution, or back to the pool of places.
      const next = project.waiting.shift();
      if (next) next();
      else if (--project.running === 0) this.projects.delete(projectId);
    }
  }

  /** Executions of the project running now, and waiting (for metrics and tests). */
  load(projectId: string): { readonly running: number; readonly waiting: number } {
    const project = this.projects.get(projectId);
    return { running: project?.running ?? 0, waiting: project?.waiting.length ?? 0 };
  }
}

function tooMany({ concurrency, queued }: SchedulerLimits): FhirError {
  return new FhirError(
    429,
    [
      {
        severity: 'error',
        code: 'throttled',
        diagnostics: `This project already runs ${concurrency} bot execution(s) and has ${queued} waiting; try again shortly`,
      },
    ],
    { 'Retry-After': String(RETRY_AFTER_SECONDS) },
  );
}

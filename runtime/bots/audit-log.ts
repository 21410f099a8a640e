/**
 * AuditEvents of bot executions, written just after the response instead of before it, and
 * gathered for up to FLUSH_DELAY_MS (or FLUSH_SIZE events) into one transaction: one event
 * alone costs more to write than the execution it records, and a batch costs a few events' worth
 * per event. Batches are kept small anyway: PGlite writes in the server's own thread, and
 * requests that arrive meanwhile wait (docs/performance.md).
 *
 * Requests that may read AuditEvents wait for the events queued in their project first
 * (`settledFor`, called by http/audit-visibility.ts): a client that searches for the AuditEvent
 * of the execution it just ran finds it. `settled()` waits for everything queued (tests,
 * shutdown). A process killed outright loses the events of its last FLUSH_DELAY_MS; another
 * process on the same PostgreSQL database sees them at most that much later.
 */
import type { FhirResource } from '../model/fhir-resource.js';
import type { ResourceStore } from '../store/resource-store.js';

const FLUSH_DELAY_MS = 25;
const FLUSH_SIZE = 50;

export class AuditLog {
  private queue: { projectId: string; event: FhirResource; seq: number }[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  /** Events are numbered as recorded, and written in that order. */
  private recorded = 0;
  private writtenThrough = 0;
  /** The number of each project's last event not yet written. */
  private readonly lastUnwritten = new Map<string, number>();

  constructor(private readonly store: ResourceStore) {}

  record(projectId: string, event: FhirResource): void {
    const seq = ++this.recorded;
    this.queue.push({ projectId, event, seq });
    this.lastUnwritten.set(projectId, seq);
    if (this.queue.length >= FLUSH_SIZE) this.startFlush();
    else this.timer ??= setTimeout(() => this.startFlush(), FLUSH_DELAY_MS);
  }

  async settled(): Promise<void> {
    while (this.queue.length > 0) {
      this.startFlush();
      await this.flushing;
    }
    await this.flushing;
  }

  /** Waits until the project's events recorded so far are written (or failed to be). */
  async settledFor(projectId: string): Promise<void> {
    const last = this.lastUnwritten.get(projectId);
    if (last === undefined) return;
    // Still queued: write it now. Else it is in the batch being written.
    if (this.queue.length > 0 && this.queue[0].seq <= last) this.startFlush();
    while (this.writtenThrough < last) await this.flushing;
  }

  private startFlush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(() => this.flush());
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    const byProject = new Map<string, FhirResource[]>();
    for (const { projectId, event } of batch) {
      const events = byProject.get(projectId);
      if (events) events.push(event);
      else byProject.set(projectId, [event]);
    }
    for (const [projectId, events] of byProject) {
      await this.store
        .write(
          projectId,
          events.map((resource) => ({ kind: 'create' as const, resource })),
        )
        .catch((error: unknown) =>
          console.error(
            `Could not write ${events.length} AuditEvent(s): ${(error as Error).message}`,
          ),
        );
    }
    if (batch.length === 0) return;
    this.writtenThrough = batch[batch.length - 1].seq;
    for (const [projectId, last] of this.lastUnwritten)
      if (last <= this.writtenThrough) this.lastUnwritten.delete(projectId);
  }
}

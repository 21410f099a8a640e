/**
 * AuditEvents of bot executions, written just after the response instead of before it, and
 * gathered for up to FLUSH_DELAY_MS (or FLUSH_SIZE events) into one transaction: one event alone
 * costs 2–4 ms to write (on PostgreSQL and on PGlite, longer than the execution), while in
 * batches of 20 each costs 0.5–1.3 ms. `settled()` waits for everything queued (tests, shutdown).
 * A process killed outright loses the events of its last FLUSH_DELAY_MS.
 */
import type { FhirResource } from '../graphql/graphql-context.js';
import type { ResourceStore } from '../store/resource-store.js';

const FLUSH_DELAY_MS = 25;
const FLUSH_SIZE = 50;

export class AuditLog {
  private queue: { projectId: string; event: FhirResource }[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly store: ResourceStore) {}

  record(projectId: string, event: FhirResource): void {
    this.queue.push({ projectId, event });
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

  private startFlush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.flushing = this.flushing.then(() => this.flush());
  }

  private async flush(): Promise<void> {
    const batch = this.queue;
    this.queue = [];
    const byProject = new Map<string, FhirResource[]>();
    for (const { projectId, event } of batch)
      byProject.set(projectId, [...(byProject.get(projectId) ?? []), event]);
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
  }
}

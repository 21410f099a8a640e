/**
 * AuditEvents of bot executions, written just after the response instead of before it: a write
 * is a transaction of its own (about 2 ms on PGlite, as long as the execution itself), and
 * executions finishing together share one. `settled()` waits for everything queued (tests,
 * shutdown).
 */
import type { FhirResource } from '../graphql/graphql-context.js';
import type { ResourceStore } from '../store/resource-store.js';

export class AuditLog {
  private queue: { projectId: string; event: FhirResource }[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private scheduled = false;

  constructor(private readonly store: ResourceStore) {}

  record(projectId: string, event: FhirResource): void {
    this.queue.push({ projectId, event });
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushing = this.flushing.then(() => this.flush());
    });
  }

  async settled(): Promise<void> {
    while (this.scheduled || this.queue.length > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      await this.flushing;
    }
    await this.flushing;
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

/**
 * The one thing a write does for Subscriptions, inside its transaction: when the project has an
 * active Subscription on a written resource's type (one indexed lookup, usually finding none), it
 * enqueues one matching job per such resource, keyed by the resource so that its writes are
 * matched in order. Everything else — which Subscriptions match, the deliveries — runs later, in
 * whichever process takes the job. AuditEvents never trigger: deliveries write them.
 */
import type { JobKind, JobQueue } from '../jobs/job-queue.js';
import { activeSubscriptionCriteria } from '../store/subscription-index.js';
import type { WriteListener } from '../store/write-operation.js';
import { resourceKey, type WrittenResource } from './written-resource.js';

export function subscriptionTrigger(
  queue: JobQueue,
  matching: JobKind<WrittenResource>,
): WriteListener {
  return async (tx, projectId, written) => {
    const candidates = written.filter((w) => w.resourceType !== 'AuditEvent');
    if (candidates.length === 0) return;
    const criteria = await activeSubscriptionCriteria(tx, projectId);
    if (criteria.length === 0) return;
    // The index keeps criteria lower-cased; no two resource types differ only in case.
    const types = new Set(criteria.map((c) => c.split('?')[0]));
    const writtenAt = new Date().toISOString();
    for (const { resourceType, id, versionId, interaction } of candidates) {
      if (!types.has(resourceType.toLowerCase())) continue;
      const payload = { projectId, resourceType, id, versionId, interaction, writtenAt };
      await queue.enqueue(matching, payload, { key: resourceKey(payload), tx });
    }
  };
}

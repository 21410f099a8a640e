/**
 * FHIR Subscriptions on the durable job queue (docs/subscriptions.md): a write enqueues a
 * matching job in its transaction (subscription-trigger.ts), the matching job enqueues one
 * delivery job per matching Subscription (subscription-matching.ts), and each delivery runs,
 * is retried and audited on its own (subscription-delivery.ts). Set up before the server serves.
 */
import type { JobQueue } from '../jobs/job-queue.js';
import type { Logger } from '../observability/logger.js';
import { SubscriptionDeliveries, type DeliveryDeps } from './subscription-delivery.js';
import { SubscriptionMatching } from './subscription-matching.js';
import { subscriptionTrigger } from './subscription-trigger.js';

export function startSubscriptions(
  deps: DeliveryDeps & { readonly queue: JobQueue; readonly logger?: Logger },
): void {
  const { store, queue, logger } = deps;
  const deliveries = new SubscriptionDeliveries(deps, queue);
  const matching = new SubscriptionMatching(store, queue, deliveries.kind, logger);
  store.listen(subscriptionTrigger(queue, matching.kind));
}

/**
 * The matching job of one write: which of the project's active Subscriptions the written version
 * matches, each through the REST search of its criteria restricted to this resource (`_id`),
 * within its author's access, and one delivery job enqueued per match. The version matched is the
 * one written (for a delete, the last before it), searched with the resource's row locked: as it
 * is while still current, else in a transaction where it is current again, rolled back after
 * (store/subscription-index.ts); a write racing the match cannot make it see another version. Run again after a crash, it
 * may enqueue a delivery twice: deliveries are at least once.
 */
import { authorAccess } from '../access/write-author.js';
import type { JobKind, JobQueue } from '../jobs/job-queue.js';
import type { FhirResource } from '../model/fhir-resource.js';
import type { Logger } from '../observability/logger.js';
import { parseSearchRequest } from '../rest/search-request.js';
import type { Transaction } from '../store/database.js';
import type { ResourceStore } from '../store/resource-store.js';
import { searchResources, type SearchSource } from '../store/search-store.js';
import { withVersionCurrent } from '../store/subscription-index.js';
import { authorOf } from './subscription-author.js';
import { supportedInteractions } from './subscription-channel.js';
import { parseCriteria } from './subscription-criteria.js';
import { deliveredVersion, type WrittenResource } from './written-resource.js';

/** What a delivery job carries: the write, and the Subscription it matched. */
export interface DeliveryPayload extends WrittenResource {
  readonly subscriptionId: string;
}

/** Active Subscriptions read per page; a project with more is read page by page. */
const PAGE = 1000;

export class SubscriptionMatching {
  readonly kind: JobKind<WrittenResource> = {
    name: 'subscription-match',
    run: (written) => this.run(written),
    // Matching fails only when the database does: nothing to record on a Subscription.
    abandon: async (written, reason) =>
      this.logger?.error({ ...written, reason }, 'subscription matching abandoned'),
  };

  constructor(
    private readonly store: ResourceStore,
    private readonly queue: JobQueue,
    private readonly delivery: JobKind<DeliveryPayload>,
    private readonly logger?: Logger,
  ) {
    queue.define(this.kind);
  }

  private async run(written: WrittenResource): Promise<void> {
    const candidates = (await this.activeSubscriptions(written.projectId)).filter((s) =>
      mayTrigger(s, written),
    );
    if (candidates.length === 0) return;
    const version = await deliveredVersion(this.store, written);
    const matched = await withVersionCurrent(this.store.db, written.projectId, version, (tx) =>
      this.matching(tx, candidates, written),
    );
    if (matched.length === 0) return;
    await this.store.db.transaction(async (tx) => {
      for (const subscription of matched) {
        const payload = { ...written, subscriptionId: subscription.id! };
        // Per Subscription and resource: one endpoint's retries never hold up another's.
        const key = `${written.projectId}/Subscription/${subscription.id}/${written.resourceType}/${written.id}`;
        await this.queue.enqueue(this.delivery, payload, { key, tx });
      }
    });
  }

  private async activeSubscriptions(projectId: string): Promise<FhirResource[]> {
    const found: FhirResource[] = [];
    for (let offset = 0; ; offset += PAGE) {
      const query = new URLSearchParams({ status: 'active', _total: 'none' });
      const request = parseSearchRequest('Subscription', query, {
        defaultCount: PAGE,
        maxCount: PAGE,
      });
      const { matches } = await searchResources(
        this.store.searchSource(),
        projectId,
        'Subscription',
        { ...request, offset },
      );
      found.push(...matches);
      if (matches.length < PAGE) return found;
    }
  }

  /**
   * The candidates whose criteria, with `_id`, find the resource in `db`: one search per
   * distinct criteria, none for criteria without parameters (every resource of the type).
   */
  private async matching(
    db: Transaction,
    candidates: readonly FhirResource[],
    { projectId, resourceType, id }: WrittenResource,
  ): Promise<FhirResource[]> {
    const source = this.store.searchSource(db);
    const found = new Map<string, boolean>();
    const matched: FhirResource[] = [];
    for (const subscription of candidates) {
      const { query } = parseCriteria(String(subscription.criteria));
      const key = query.toString();
      let matches = found.get(key);
      if (matches === undefined) {
        matches = key === '' || (await this.finds(source, projectId, resourceType, id, query));
        found.set(key, matches);
      }
      if (matches) matched.push(subscription);
    }
    return matched;
  }

  private async finds(
    source: SearchSource,
    projectId: string,
    resourceType: string,
    id: string,
    query: URLSearchParams,
  ): Promise<boolean> {
    const restricted = new URLSearchParams(query);
    restricted.append('_id', id);
    const request = parseSearchRequest(resourceType, restricted, { defaultCount: 1, maxCount: 1 });
    const { matches } = await searchResources(source, projectId, resourceType, {
      ...request,
      total: 'none',
    });
    return matches.length > 0;
  }
}

/**
 * A Subscription on the written resource's type, for its interaction, whose author may search
 * that type, and whose `end` (if any) had not come when the resource was written; never a
 * Subscription triggered by its own write.
 */
function mayTrigger(subscription: FhirResource, written: WrittenResource): boolean {
  if (
    typeof subscription.end === 'string' &&
    Date.parse(subscription.end) < Date.parse(written.writtenAt)
  )
    return false;
  const criteria = String(subscription.criteria ?? '');
  if (criteria.split('?')[0] !== written.resourceType) return false;
  if (written.resourceType === 'Subscription' && subscription.id === written.id) return false;
  if (!supportedInteractions(subscription).includes(written.interaction)) return false;
  const access = authorAccess(authorOf(subscription), written.projectId);
  return access.scopes.allows(written.resourceType, 's');
}

/**
 * The delivery job: one write to one Subscription. An attempt reads the Subscription (deleted or
 * no longer active: nothing to do), then POSTs to its endpoint (rest-hook.ts) or runs its
 * `Bot/{id}` with the resource as `event.input`, with its author's access; records an AuditEvent
 * whatever the outcome; and throws when the delivery failed, so that the queue tries again after
 * its backoff. When the last attempt fails the Subscription goes to `error`, with the reason. A
 * Subscription whose author was a client or a Bot since deleted goes to `error` at once, sending
 * nothing: what a deleted client's tokens, or a deleted Bot, can no longer read, its
 * Subscriptions no longer send.
 */
import { authorizeExecute } from '../access/authorize.js';
import { authorAccess } from '../access/write-author.js';
import type { AuditLog } from '../bots/audit-log.js';
import type { BotRunner } from '../bots/bot-runner.js';
import type { ClientRegistry } from '../access/client-registry.js';
import type { EgressClient } from '../egress/egress-client.js';
import type { JobAttempt, JobKind, JobQueue } from '../jobs/job-queue.js';
import type { FhirResource } from '../model/fhir-resource.js';
import type { Metrics } from '../observability/metrics.js';
import type { ResourceStore } from '../store/resource-store.js';
import type { WriteAuthor } from '../store/write-operation.js';
import { deliveryAuditEvent } from './delivery-audit.js';
import { deliveryHeaders, sendRestHook, type Notification } from './rest-hook.js';
import { authorOf } from './subscription-author.js';
import { parseChannel, type Channel } from './subscription-channel.js';
import type { DeliveryPayload } from './subscription-matching.js';
import { deliveredVersion } from './written-resource.js';

export interface DeliveryDeps {
  readonly store: ResourceStore;
  readonly runner: BotRunner;
  readonly egress: EgressClient;
  readonly audit: AuditLog;
  /** Whether a Subscription's author client still exists (a Bot author is read from `store`). */
  readonly clients: Pick<ClientRegistry, 'isActive'>;
  readonly metrics?: Metrics;
  /** The server's public root URL with a trailing slash, a bot's `event.baseUrl`. */
  readonly baseUrl: string;
}

export class SubscriptionDeliveries {
  readonly kind: JobKind<DeliveryPayload> = {
    name: 'subscription-delivery',
    run: (delivery, attempt) => this.run(delivery, attempt),
    abandon: (delivery, reason) => this.abandon(delivery, reason),
  };

  constructor(
    private readonly deps: DeliveryDeps,
    queue: JobQueue,
  ) {
    queue.define(this.kind);
  }

  private async run(delivery: DeliveryPayload, attempt: JobAttempt): Promise<void> {
    const { store, audit, metrics } = this.deps;
    const subscription = await activeSubscription(store, delivery);
    if (!subscription) return;
    const channel = parseChannel(subscription.channel);
    const labels = metricLabels(channel);
    const started = new Date();
    if (attempt.attempt === 1)
      metrics?.subscriptionLatency.observe(
        labels,
        (started.getTime() - Date.parse(delivery.writtenAt)) / 1000,
      );
    else metrics?.subscriptionRetries.inc(labels);
    const author = authorOf(subscription);
    const authorGone = !(await this.authorActive(delivery.projectId, author));
    let failure: string | undefined;
    if (authorGone) failure = `Its author, ${authorName(author)}, no longer exists`;
    else {
      const notification: Notification = {
        subscriptionId: delivery.subscriptionId,
        interaction: delivery.interaction,
        resource: await deliveredVersion(store, delivery),
      };
      try {
        if (channel.bot) await this.runBot(delivery, author, channel, notification);
        else await sendRestHook(this.deps.egress, channel, notification);
      } catch (error) {
        failure = (error as Error).message;
      }
    }
    audit.record(
      delivery.projectId,
      deliveryAuditEvent({
        delivery,
        author,
        endpoint: channel.endpoint,
        attempt,
        started,
        ...(failure === undefined ? {} : { failure }),
      }),
    );
    metrics?.subscriptionDeliveries.inc({
      ...labels,
      outcome: failure === undefined ? 'delivered' : 'failed',
    });
    // Tried again, it would fail the same way.
    if (authorGone) return this.abandon(delivery, failure!);
    if (failure !== undefined) throw new Error(failure);
  }

  /** A client author still registered, or a bot author (`Bot/{id}`) whose Bot is not deleted. */
  private async authorActive(projectId: string, author: WriteAuthor): Promise<boolean> {
    const bot = botIdOf(author);
    if (bot === undefined) return this.deps.clients.isActive(author.clientId);
    return (await currentVersion(this.deps.store, projectId, 'Bot', bot)) !== undefined;
  }

  /**
   * The Bot with the resource as `event.input` (for a delete, `{ deletedResource }`, as Medplum
   * sends), run as `$execute` would run it for the Subscription's author: one who may not run
   * bots gets no run. A bot that throws or runs out of time fails the attempt.
   */
  private async runBot(
    delivery: DeliveryPayload,
    author: WriteAuthor,
    channel: Channel,
    notification: Notification,
  ): Promise<void> {
    const { store, runner, baseUrl } = this.deps;
    const { projectId } = delivery;
    const access = authorAccess(author, projectId);
    authorizeExecute(access);
    const bot = await store.read(projectId, 'Bot', channel.bot!);
    const value =
      delivery.interaction === 'delete'
        ? { deletedResource: notification.resource }
        : notification.resource;
    const outcome = await runner.execute({
      projectId,
      bot,
      input: { kind: 'json', contentType: 'application/fhir+json', value },
      callerId: access.clientId,
      caller: access,
      headers: deliveryHeaders(channel, notification),
      baseUrl,
    });
    if (outcome.status === 'error') throw new Error(`Bot/${bot.id} failed: ${outcome.message}`);
    if (outcome.status !== 'ok')
      throw new Error(`Bot/${bot.id} ran past its ${outcome.status} limit and was stopped`);
  }

  /** The Subscription goes to `error` with the reason, unless it was changed from active since. */
  private async abandon(delivery: DeliveryPayload, reason: string): Promise<void> {
    const { store, metrics } = this.deps;
    const subscription = await activeSubscription(store, delivery);
    if (!subscription) return;
    const channel = parseChannel(subscription.channel);
    await store.write(delivery.projectId, [
      {
        kind: 'update',
        resourceType: 'Subscription',
        id: delivery.subscriptionId,
        resource: {
          ...subscription,
          status: 'error',
          error: `Delivery of ${delivery.resourceType}/${delivery.id}/_history/${delivery.versionId}: ${reason}`,
        },
        // Still its author's Subscription, running with the same access.
        author: authorOf(subscription),
      },
    ]);
    metrics?.subscriptionFailures.inc(metricLabels(channel));
  }
}

/** The Subscription when it still exists and is active; else the delivery has nothing to do. */
async function activeSubscription(
  store: ResourceStore,
  { projectId, subscriptionId }: DeliveryPayload,
): Promise<FhirResource | undefined> {
  const subscription = await currentVersion(store, projectId, 'Subscription', subscriptionId);
  return subscription?.status === 'active' ? subscription : undefined;
}

/** The current version of a resource; undefined when it is unknown or deleted. */
async function currentVersion(
  store: ResourceStore,
  projectId: string,
  resourceType: string,
  id: string,
): Promise<FhirResource | undefined> {
  const [found] = (await store.readMany(projectId, [{ resourceType, id }])).values();
  return found;
}

/** The metrics' `channel` label: what delivers, a bot run or a rest-hook. */
function metricLabels(channel: Channel): { channel: 'bot' | 'rest-hook' } {
  return { channel: channel.bot ? 'bot' : 'rest-hook' };
}

/** The id of a bot author (`Bot/{id}`, as a bot's writes record it); undefined for a client. */
function botIdOf(author: WriteAuthor): string | undefined {
  return author.clientId.startsWith('Bot/') ? author.clientId.slice('Bot/'.length) : undefined;
}

function authorName(author: WriteAuthor): string {
  return botIdOf(author) === undefined ? `client ${author.clientId}` : author.clientId;
}

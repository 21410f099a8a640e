/**
 * A rest-hook delivery: a POST to the Subscription's endpoint through the egress client, so under
 * the same policy as a bot's `fetch` (GRAPHIR_EGRESS_ALLOW). With `channel.payload` the body is
 * the resource as FHIR JSON (`{}` for a delete, as Medplum sends); without it the POST has no
 * body, a bare notification (HAPI's). Medplum's headers say which Subscription and interaction
 * (and for a delete, which resource), then the Subscription's own `channel.header`s.
 * @see http://hl7.org/fhir/R4/subscription.html#2.46.7.1
 */
import type { EgressClient } from '../egress/egress-client.js';
import type { FhirResource } from '../model/fhir-resource.js';
import type { Channel, Interaction } from './subscription-channel.js';

/** How long an endpoint may take to answer before the attempt fails. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface Notification {
  readonly subscriptionId: string;
  readonly interaction: Interaction;
  readonly resource: FhirResource;
}

/** The headers of a delivery, for a rest-hook's request and a bot's `event.headers`. */
export function deliveryHeaders(
  channel: Channel,
  { subscriptionId, interaction, resource }: Notification,
): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Medplum-Subscription': subscriptionId,
    'X-Medplum-Interaction': interaction,
  };
  if (interaction === 'delete')
    headers['X-Medplum-Deleted-Resource'] = `${resource.resourceType}/${resource.id}`;
  for (const [name, value] of channel.headers) headers[name] = value;
  return headers;
}

/** Resolves when the endpoint answered 2xx; throws saying what went wrong otherwise. */
export async function sendRestHook(
  egress: EgressClient,
  channel: Channel,
  notification: Notification,
): Promise<void> {
  const body = channel.payload
    ? notification.interaction === 'delete'
      ? '{}'
      : JSON.stringify(notification.resource)
    : undefined;
  const headers = {
    ...(body === undefined ? {} : { 'Content-Type': 'application/fhir+json' }),
    ...deliveryHeaders(channel, notification),
  };
  let response: Response;
  try {
    response = await egress.fetch(channel.endpoint, {
      method: 'POST',
      headers,
      ...(body === undefined ? {} : { body }),
      // A redirect is the endpoint's answer, not a second place to deliver to.
      redirect: 'manual',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    throw new Error(`POST ${channel.endpoint} failed: ${cause ?? (error as Error).message}`);
  }
  // Nothing of the answer is kept but its status.
  await response.body?.cancel();
  if (!response.ok) throw new Error(`POST ${channel.endpoint} answered ${response.status}`);
}

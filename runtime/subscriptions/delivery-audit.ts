/**
 * The AuditEvent of one delivery attempt: the Subscription, the resource and version delivered,
 * the endpoint, the outcome, the attempt and the duration; written through the audit log, as a
 * bot execution's is (bots/audit-log.ts).
 * @see http://hl7.org/fhir/R4/auditevent.html
 */
import type { JobAttempt } from '../jobs/job-queue.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { storable } from '../bots/bot-runner.js';
import type { WriteAuthor } from '../store/write-operation.js';
import type { DeliveryPayload } from './subscription-matching.js';

export interface DeliveryRecord {
  readonly delivery: DeliveryPayload;
  readonly author: WriteAuthor;
  readonly endpoint: string;
  readonly attempt: JobAttempt;
  readonly started: Date;
  /** Absent when the endpoint took it. */
  readonly failure?: string;
}

export function deliveryAuditEvent({
  delivery,
  author,
  endpoint,
  attempt,
  started,
  failure,
}: DeliveryRecord): FhirResource {
  const ended = new Date();
  const detail = (type: string, valueString: string) => ({ type, valueString });
  const attempts = `Attempt ${attempt.attempt} of ${attempt.maxAttempts}`;
  const { resourceType, id, versionId, interaction, subscriptionId } = delivery;
  return {
    resourceType: 'AuditEvent',
    type: {
      system: 'http://terminology.hl7.org/CodeSystem/audit-event-type',
      code: 'transmit',
      display: 'Transmit Record',
    },
    action: 'E',
    period: { start: started.toISOString(), end: ended.toISOString() },
    recorded: ended.toISOString(),
    outcome: failure === undefined ? '0' : '4',
    outcomeDesc: storable(
      failure === undefined ? `${attempts}: delivered` : `${attempts}: ${failure}`,
    ),
    agent: [
      {
        type: { text: 'subscription author' },
        who: { identifier: { system: 'urn:graphir:client', value: author.clientId } },
        requestor: false,
      },
    ],
    source: { observer: { display: 'Graphir subscriptions' } },
    entity: [
      {
        what: { reference: `Subscription/${subscriptionId}` },
        detail: [
          detail('endpoint', storable(endpoint)),
          detail('interaction', interaction),
          detail('attempt', String(attempt.attempt)),
          detail('duration-ms', String(ended.getTime() - started.getTime())),
        ],
      },
      { what: { reference: `${resourceType}/${id}/_history/${versionId}` } },
    ],
  };
}

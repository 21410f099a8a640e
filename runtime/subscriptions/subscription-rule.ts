/**
 * What a Subscription must be to be stored, checked on every create and update whatever the path
 * (REST, Bundles, GraphQL, a bot's `fhir` client), before anything touches the database: its
 * criteria parse as a REST search would; `channel.type` is `rest-hook`, the one channel this
 * server delivers to; `channel.endpoint` is an http(s) URL or `Bot/{id}`; `channel.payload` is
 * absent or FHIR JSON; each `channel.header` is `Name: value`; the interaction extension names
 * create, update or delete. The server then settles what it owns: `requested` becomes `active`
 * (it was accepted), and the writer becomes its author, whose access it runs with — a writer who
 * may not search the criteria's type, or run bots for a `Bot/` endpoint, is refused here (403).
 * @see http://hl7.org/fhir/R4/subscription.html
 */
import { authorize, authorizeExecute } from '../access/authorize.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import type { WritePreparer } from '../store/write-operation.js';
import { withAuthor } from './subscription-author.js';
import { authorAccess } from '../access/write-author.js';
import { parseCriteria } from './subscription-criteria.js';
import { parseChannel, supportedInteractions } from './subscription-channel.js';

/** @see http://hl7.org/fhir/R4/valueset-subscription-status.html */
const STATUSES = new Set(['requested', 'active', 'error', 'off']);

export const prepareSubscription: WritePreparer = (resource, author) => {
  if (resource.resourceType !== 'Subscription') return resource;
  if (!STATUSES.has(resource.status as string))
    throw fhirError(
      400,
      'value',
      `Subscription.status: ${JSON.stringify(resource.status ?? null)} is not requested, active, error or off`,
      'Subscription.status',
    );
  const criteria = parseCriteria(String(resource.criteria ?? ''));
  const channel = parseChannel(resource.channel);
  supportedInteractions(resource);
  // Every path that writes for a client passes its author; one that does not is a bug, and a
  // Subscription with no author would run with nobody's access, or with one the client named.
  if (!author) throw new Error('A Subscription was written without its author');
  const access = authorAccess(author);
  authorize(access, criteria.resourceType, 's');
  if (channel.bot) authorizeExecute(access);
  const status = resource.status === 'requested' ? 'active' : resource.status;
  return withAuthor({ ...resource, status } as FhirResource, author);
};

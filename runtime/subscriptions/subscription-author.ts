/**
 * Whose access a Subscription matches and delivers with: its author's, the client (or bot) that
 * wrote its current version, as that writer's token said. The server keeps it in the Subscription
 * itself, in an extension it writes over on every write (a client cannot name another author),
 * so that readers see whose access a Subscription runs with.
 */
import type { FhirResource } from '../model/fhir-resource.js';
import type { WriteAuthor } from '../store/write-operation.js';

export const AUTHOR_EXTENSION = 'https://graphir.dev/fhir/StructureDefinition/subscription-author';

interface Extension {
  readonly url: string;
  readonly valueString?: string;
  readonly valueBoolean?: boolean;
  readonly extension?: readonly Extension[];
}

/** The Subscription with `author` as its author extension, any earlier one dropped. */
export function withAuthor(subscription: FhirResource, author: WriteAuthor): FhirResource {
  const others = extensionsOf(subscription).filter((e) => e.url !== AUTHOR_EXTENSION);
  const recorded: Extension = {
    url: AUTHOR_EXTENSION,
    extension: [
      { url: 'client', valueString: author.clientId },
      // An empty scope is no FHIR string: a client with no scopes is recorded without one.
      ...(author.scope ? [{ url: 'scope', valueString: author.scope }] : []),
      { url: 'admin', valueBoolean: author.admin },
    ],
  };
  return { ...subscription, extension: [...others, recorded] };
}

/** The author the server recorded in the Subscription; an error when there is none. */
export function authorOf(subscription: FhirResource): WriteAuthor {
  const recorded = extensionsOf(subscription).find((e) => e.url === AUTHOR_EXTENSION);
  const part = (url: string) => recorded?.extension?.find((e) => e.url === url);
  const clientId = part('client')?.valueString;
  if (!clientId) throw new Error(`Subscription/${subscription.id} has no recorded author`);
  return {
    clientId,
    scope: part('scope')?.valueString ?? '',
    admin: part('admin')?.valueBoolean === true,
  };
}

function extensionsOf(resource: FhirResource): Extension[] {
  return Array.isArray(resource.extension) ? (resource.extension as Extension[]) : [];
}

/**
 * A Subscription's `channel` and its interaction extension, read and checked: where and how a
 * delivery goes, and which writes trigger one.
 * @see http://hl7.org/fhir/R4/subscription-definitions.html#Subscription.channel
 */
import { fhirError } from '../model/fhir-error.js';
import type { FhirResource } from '../model/fhir-resource.js';
import { parseChannelHeaders, type ChannelHeader } from './channel-header.js';

export type Interaction = 'create' | 'update' | 'delete';

/** Medplum's extension: the interactions that trigger the Subscription (by default create and update). */
export const INTERACTION_EXTENSION =
  'https://medplum.com/fhir/StructureDefinition/subscription-supported-interaction';
const INTERACTIONS: readonly Interaction[] = ['create', 'update', 'delete'];
const DEFAULT_INTERACTIONS: readonly Interaction[] = ['create', 'update'];

export interface Channel {
  /** An http(s) URL, or `Bot/{id}`. */
  readonly endpoint: string;
  /** The Bot's id when the endpoint is `Bot/{id}`. */
  readonly bot?: string;
  /** True when the resource goes in the body (`payload` set); else the POST has none. */
  readonly payload: boolean;
  /** From `channel.header`, in order. */
  readonly headers: readonly ChannelHeader[];
}

const BOT_ENDPOINT = /^Bot\/([A-Za-z0-9\-.]{1,64})$/;
const PAYLOADS = new Set(['application/fhir+json', 'application/json']);

export function parseChannel(value: unknown): Channel {
  const channel = (value ?? {}) as {
    type?: unknown;
    endpoint?: unknown;
    payload?: unknown;
    header?: unknown;
  };
  if (channel.type !== 'rest-hook')
    throw invalid(
      'channel.type',
      `${JSON.stringify(channel.type ?? null)} is not supported: this server delivers rest-hook only`,
    );
  const endpoint = typeof channel.endpoint === 'string' ? channel.endpoint : '';
  const bot = BOT_ENDPOINT.exec(endpoint)?.[1];
  if (!bot && !isHttpUrl(endpoint))
    throw invalid(
      'channel.endpoint',
      `${JSON.stringify(endpoint)} is neither an http(s) URL nor Bot/{id}`,
    );
  const payload = typeof channel.payload === 'string' ? channel.payload : undefined;
  if (payload !== undefined && !PAYLOADS.has(payload.split(';')[0].trim().toLowerCase()))
    throw invalid(
      'channel.payload',
      `${payload} is not supported (application/fhir+json, or none for a notification without a body)`,
    );
  const headers = parseChannelHeaders(channel.header);
  return { endpoint, ...(bot ? { bot } : {}), payload: payload !== undefined, headers };
}

/** The interactions that trigger the Subscription; 400 for one that is not create, update or delete. */
export function supportedInteractions(subscription: FhirResource): readonly Interaction[] {
  const extensions = Array.isArray(subscription.extension)
    ? (subscription.extension as { url?: string; valueCode?: unknown }[])
    : [];
  const named = extensions.filter((e) => e.url === INTERACTION_EXTENSION);
  if (named.length === 0) return DEFAULT_INTERACTIONS;
  return named.map(({ valueCode }) => {
    if (!INTERACTIONS.includes(valueCode as Interaction))
      throw invalid(
        'extension',
        `${INTERACTION_EXTENSION} takes valueCode create, update or delete, not ${JSON.stringify(valueCode ?? null)}`,
      );
    return valueCode as Interaction;
  });
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

function invalid(element: string, message: string) {
  return fhirError(
    400,
    'invalid',
    `Subscription.${element}: ${message}`,
    `Subscription.${element}`,
  );
}

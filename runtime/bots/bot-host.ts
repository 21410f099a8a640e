/**
 * The `fhir` client a bot receives, host side: each host call the isolate's client (the parts
 * of sandbox-fhir.ts) makes, its arguments checked, run as a FHIR interaction with the bot's
 * access (bot-interactions.ts); `request` for `fhir.get/post/…` (bot-requests.ts); `executeBot`
 * through the bot runner (nested-bots.ts).
 */
import { authorizeExecute } from '../access/authorize.js';
import { FHIR_BASE } from '../model/fhir-base.js';
import { fhirError } from '../model/fhir-error.js';
import type { FhirResource } from '../model/fhir-resource.js';
import type { BotInput } from './bot-input.js';
import { BotInteractions, type BotInteractionsOptions } from './bot-interactions.js';
import { routeRequest } from './bot-requests.js';
import { findBot, nestedAnswer, nestedInput, type WireBody } from './nested-bots.js';
import type { SandboxResult } from './sandbox-types.js';

/** The interactions' options (the FHIR base made from `baseUrl`), and what bots calling bots need. */
export interface BotHostOptions extends Omit<BotInteractionsOptions, 'base'> {
  /** The server's public root URL with a trailing slash (`event.baseUrl`). */
  readonly baseUrl: string;
  /** Runs another bot of the project for `fhir.executeBot` (BotRunner, one level deeper). */
  readonly runBot: (bot: FhirResource, input: BotInput) => Promise<SandboxResult>;
}

export type HostCall = (method: string, args: unknown[]) => Promise<unknown>;

export function createBotHost(options: BotHostOptions): HostCall {
  const { store, projectId, limits, baseUrl, runBot } = options;
  const interactions = new BotInteractions({
    ...options,
    base: `${baseUrl.replace(/\/$/, '')}${FHIR_BASE}`,
  });
  const executeBot = async (
    idOrIdentifier: unknown,
    body: WireBody,
    contentType: string | null,
  ) => {
    authorizeExecute(options.access);
    const bot = await findBot(store, projectId, limits, idOrIdentifier);
    return nestedAnswer(await runBot(bot, nestedInput(body, contentType)));
  };
  const methods: Record<string, (...args: unknown[]) => Promise<unknown>> = {
    readResource: (type, id) => interactions.read(text(type, 'resourceType'), text(id, 'id')),
    readHistory: (type, id) => interactions.history(text(type, 'resourceType'), text(id, 'id')),
    readVersion: (type, id, vid) =>
      interactions.readVersion(text(type, 'resourceType'), text(id, 'id'), text(vid, 'vid')),
    search: (type, query) => interactions.search(text(type, 'resourceType'), params(query)),
    createResource: (resource) => interactions.create(resourceOf(resource)),
    createResourceIfNoneExist: (resource, query) =>
      interactions.create(resourceOf(resource), text(query, 'query')),
    updateResource: (resource) => interactions.update(resourceOf(resource)),
    upsertResource: (resource, query) => interactions.upsert(resourceOf(resource), params(query)),
    patchResource: (type, id, operations) =>
      interactions.patch(text(type, 'resourceType'), text(id, 'id'), operations),
    deleteResource: (type, id) => interactions.delete(text(type, 'resourceType'), text(id, 'id')),
    executeBatch: (bundle) => interactions.batch(bundle),
    graphql: (query, operationName, variables) =>
      interactions.graphql(
        text(query, 'query'),
        operationName === null ? undefined : text(operationName, 'operationName'),
        variablesOf(variables),
      ),
    executeBot: (idOrIdentifier, body, contentType) =>
      executeBot(idOrIdentifier, wireBody(body), optionalText(contentType, 'contentType')),
    // An R4 Binary has no element for Medplum's file name: it is not kept.
    createBinary: (data, contentType) =>
      interactions.create({
        resourceType: 'Binary',
        contentType: optionalText(contentType, 'contentType') ?? 'application/octet-stream',
        data: text(data, 'data'),
      }),
    download: async (url) => {
      const resource = (await routeRequest(
        { interactions, executeBot },
        'GET',
        binaryUrl(text(url, 'url')),
        null,
        null,
      )) as FhirResource;
      if (resource.resourceType === 'Binary')
        return { contentType: resource.contentType, data: resource.data ?? '' };
      return {
        contentType: 'application/fhir+json',
        data: Buffer.from(JSON.stringify(resource)).toString('base64'),
      };
    },
    request: (method, url, body, contentType) =>
      routeRequest(
        { interactions, executeBot },
        text(method, 'method'),
        text(url, 'url'),
        wireBody(body),
        optionalText(contentType, 'contentType'),
      ),
  };
  return async (method, args) => {
    const run = Object.hasOwn(methods, method) ? methods[method] : undefined;
    if (!run)
      throw fhirError(400, 'not-supported', `fhir.${method} is not a method of the bot's client`);
    return run(...args);
  };
}

/** `Binary/{id}` as Medplum's `download` takes it, under the FHIR base. */
function binaryUrl(url: string): string {
  return url.startsWith('Binary/') ? `fhir/R4/${url}` : url;
}

function text(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '')
    throw fhirError(400, 'invalid', `${name} must be a non-empty string`);
  return value;
}

function optionalText(value: unknown, name: string): string | null {
  return value === null || value === undefined ? null : text(value, name);
}

function resourceOf(value: unknown): FhirResource {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw fhirError(400, 'invalid', 'Expected a FHIR resource');
  return value as FhirResource;
}

/** Name/value pairs from the isolate's client (isolate/fhir-query.ts). */
function params(query: unknown): URLSearchParams {
  const pairs = Array.isArray(query) ? query : [];
  if (
    !Array.isArray(query) ||
    !pairs.every((p) => Array.isArray(p) && p.length === 2 && p.every((s) => typeof s === 'string'))
  )
    throw fhirError(400, 'invalid', 'A search query is a list of [name, value] pairs');
  return new URLSearchParams(pairs as [string, string][]);
}

function variablesOf(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw fhirError(400, 'invalid', 'GraphQL variables must be an object');
  return value as Record<string, unknown>;
}

function wireBody(value: unknown): WireBody {
  if (value === null || value === undefined) return null;
  const body = value as { text?: unknown; json?: unknown };
  if (typeof body === 'object' && typeof body.text === 'string') return { text: body.text };
  if (typeof body === 'object' && 'json' in body) return { json: body.json };
  throw fhirError(400, 'invalid', 'A request body is { text } or { json }');
}

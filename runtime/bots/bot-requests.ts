/**
 * A bot's `fhir.get/post/put/patch/delete(url, body)`: the URL, under the FHIR base (absolute,
 * as `fhir.fhirUrl` makes it, or relative to the server root as MedplumClient resolves it), is
 * routed as the REST API routes it to the same interaction a typed method would use.
 */
import { fhirError } from '../model/fhir-error.js';
import { capabilityStatementJson } from '../rest/capability-statement.js';
import { resourceBodyFor } from '../rest/resource-body.js';
import type { BotInteractions } from './bot-interactions.js';
import type { WireBody } from './nested-bots.js';

export interface RequestTargets {
  readonly interactions: BotInteractions;
  readonly executeBot: (
    idOrIdentifier: unknown,
    body: WireBody,
    contentType: string | null,
  ) => Promise<unknown>;
}

export async function routeRequest(
  { interactions, executeBot }: RequestTargets,
  method: string,
  url: string,
  body: WireBody,
  contentType: string | null,
): Promise<unknown> {
  const { path, query } = underBase(url, interactions.base);
  const [type, id, ...rest] = path;
  const json = () => jsonOf(body);
  if (type === 'Bot' && (id === '$execute' || rest[0] === '$execute') && method === 'POST') {
    const identifier = query.get('identifier');
    const [system, value] = identifier?.includes('|')
      ? identifier.split('|', 2)
      : [undefined, identifier];
    return executeBot(id === '$execute' ? { system, value } : id, body, contentType);
  }
  switch (method) {
    case 'GET':
      if (path.length === 1 && type === 'metadata')
        return JSON.parse(capabilityStatementJson(interactions.base)) as unknown;
      if (path.length === 1) return interactions.search(type, query);
      if (path.length === 2) return interactions.read(type, id);
      if (path.length === 3 && rest[0] === '_history') return interactions.history(type, id);
      if (path.length === 4 && rest[0] === '_history')
        return interactions.readVersion(type, id, rest[1]);
      break;
    case 'POST':
      if (path.length === 0) return interactions.batch(json());
      if (path.length === 1 && type === '$graphql') {
        const { query: text, operationName, variables } = (json() ?? {}) as Record<string, unknown>;
        return interactions.graphql(
          String(text ?? ''),
          typeof operationName === 'string' ? operationName : undefined,
          (variables ?? {}) as Record<string, unknown>,
        );
      }
      if (path.length === 1) return interactions.create(resourceBodyFor(type, json()));
      if (path.length === 2 && id === '_search') {
        const form = new URLSearchParams(body && 'text' in body ? body.text : '');
        for (const [name, value] of query) form.append(name, value);
        return interactions.search(type, form);
      }
      break;
    case 'PUT':
      if (path.length === 1) return interactions.upsert(resourceBodyFor(type, json()), query);
      if (path.length === 2) return interactions.update(resourceBodyFor(type, json()), id);
      break;
    case 'PATCH':
      if (path.length === 2) return interactions.patch(type, id, json());
      break;
    case 'DELETE':
      if (path.length === 1) return interactions.conditionalDelete(type, query);
      if (path.length === 2) return interactions.delete(type, id);
      break;
  }
  throw fhirError(404, 'not-found', `The bot client has no route for ${method} ${url}`);
}

/** The path segments under the FHIR base, and the query. */
function underBase(url: string, base: string): { path: string[]; query: URLSearchParams } {
  const root = base.replace(/fhir\/R4$/, '');
  let rest: string;
  if (url.startsWith(`${base}/`) || url === base) rest = url.slice(base.length + 1);
  else if (/^[a-z][a-z0-9+.-]*:/i.test(url))
    throw fhirError(
      400,
      'not-supported',
      `${url} is not under the FHIR base ${base}: the bot client reaches only this server's FHIR API`,
    );
  else {
    const relative = url.replace(/^\//, '');
    if (!/^fhir\/R4(\/|\?|$)/.test(relative))
      throw fhirError(
        400,
        'not-supported',
        `${root}${relative} is not under the FHIR base ${base}: the bot client reaches only this server's FHIR API`,
      );
    rest = relative.slice('fhir/R4/'.length);
  }
  const at = rest.indexOf('?');
  const path = (at < 0 ? rest : rest.slice(0, at)).split('/').filter(Boolean).map(decode);
  return { path, query: new URLSearchParams(at < 0 ? '' : rest.slice(at + 1)) };
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw fhirError(400, 'invalid', `${segment} is not a valid URL segment`);
  }
}

function jsonOf(body: WireBody): unknown {
  if (body === null) throw fhirError(400, 'required', 'The request has no body');
  if ('json' in body) return body.json;
  try {
    return JSON.parse(body.text) as unknown;
  } catch (error) {
    throw fhirError(400, 'structure', `The body is not JSON: ${(error as Error).message}`);
  }
}

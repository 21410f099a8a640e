/**
 * `fhir.executeBot` from a bot: another bot of the same project, found and given its input as
 * `$execute` would (runtime/http/bot-routes.ts, bot-input.ts), and its answer read as
 * MedplumClient reads the HTTP response: JSON parsed, text as text, a failure thrown as the
 * OperationOutcome the route would answer with.
 */
import type { Context } from 'koa';
import { fhirError } from '../model/fhir-error.js';
import { informational } from '../model/fhir-error.js';
import type { FhirResource } from '../model/fhir-resource.js';
import type { SearchLimits } from '../rest/search-request.js';
import type { ResourceStore } from '../store/resource-store.js';
import { readBotInput, type BotInput } from './bot-input.js';
import { botByIdentifier } from './bot-lookup.js';
import type { SandboxResult } from './sandbox-types.js';

/** A request body from the isolate: a string as it is, anything else as JSON. */
export type WireBody = { readonly text: string } | { readonly json: unknown } | null;

/** The Bot named by its id or its identifier (`{system, value}`), in the project. */
export async function findBot(
  store: ResourceStore,
  projectId: string,
  limits: SearchLimits,
  idOrIdentifier: unknown,
): Promise<FhirResource> {
  if (typeof idOrIdentifier === 'string' && idOrIdentifier !== '')
    return store.read(projectId, 'Bot', idOrIdentifier);
  const { system, value } = (idOrIdentifier ?? {}) as { system?: unknown; value?: unknown };
  if (typeof value !== 'string' || value === '')
    throw fhirError(400, 'required', 'Name the bot by its id or its identifier {system, value}');
  const identifier = typeof system === 'string' ? `${system}|${value}` : value;
  return botByIdentifier(store, projectId, identifier, limits);
}

/** The body as `$execute` reads a POST of it with `contentType` (415, 400 as it would). */
export function nestedInput(body: WireBody, contentType: string | null): BotInput {
  const mediaType = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const rawBody = body === null ? '' : 'text' in body ? body.text : JSON.stringify(body.json);
  let parsed: unknown = rawBody;
  if (/json$/.test(mediaType) && body !== null) {
    if ('json' in body) parsed = body.json;
    else {
      try {
        parsed = JSON.parse(rawBody);
      } catch (error) {
        throw fhirError(400, 'structure', `The body is not JSON: ${(error as Error).message}`);
      }
    }
  }
  // The shape of a Koa request that readBotInput reads: the method, Content-Type and body.
  const request = {
    method: 'POST',
    get: (header: string) => (header.toLowerCase() === 'content-type' ? (contentType ?? '') : ''),
    request: { body: parsed, rawBody },
  };
  return readBotInput(request as unknown as Context, []);
}

/**
 * The answer MedplumClient gets from `$execute`: text (a string, or HL7 as ER7), JSON, or the
 * OperationOutcome for nothing; a failure as the error the route answers with.
 */
export function nestedAnswer(result: SandboxResult): unknown {
  switch (result.status) {
    case 'ok':
      if (result.hl7 !== undefined) return result.hl7;
      return result.value ?? informational('The bot ran and returned nothing');
    case 'timeout':
      throw fhirError(408, 'timeout', 'The bot ran past its time limit and was stopped');
    case 'memory':
      throw fhirError(400, 'too-costly', 'The bot ran past its memory limit and was stopped');
    default:
      throw fhirError(400, 'processing', result.message);
  }
}

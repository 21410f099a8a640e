/**
 * A `$execute` request's body (or, for GET, its query) → `event.input`, typed by the media type
 * whatever its case and parameters. Anything that does not parse as its Content-Type says is
 * refused here, before any bot runs.
 */
import type { Context } from 'koa';
import { fhirError } from '../model/fhir-error.js';
import { HL7_V2_ER7, Hl7Message } from '../hl7/index.js';

export { HL7_V2_ER7 };

export type BotInput =
  | { readonly kind: 'text'; readonly contentType: string; readonly value: string }
  | { readonly kind: 'json'; readonly contentType: string; readonly value: unknown }
  /** HL7 v2: the text, parsed again inside the sandbox into an Hl7Message. */
  | { readonly kind: 'hl7'; readonly contentType: string; readonly value: string };

const SUPPORTED = [
  'text/plain',
  'application/json',
  'application/x-www-form-urlencoded',
  'application/fhir+json',
  HL7_V2_ER7,
];

export function readBotInput(ctx: Context, ignoredQuery: readonly string[]): BotInput {
  if (ctx.method === 'GET') {
    return {
      kind: 'json',
      contentType: 'application/x-www-form-urlencoded',
      value: firstValues(ctx.URL.searchParams, ignoredQuery),
    };
  }
  const mediaType = (ctx.get('Content-Type').split(';')[0] ?? '').trim().toLowerCase();
  if (!SUPPORTED.includes(mediaType)) {
    throw fhirError(
      415,
      'not-supported',
      `Content-Type ${mediaType || '(none)'} is not supported by $execute (${SUPPORTED.join(', ')})`,
    );
  }
  const request = ctx.request as { body?: unknown; rawBody?: string };
  switch (mediaType) {
    case 'text/plain':
      return {
        kind: 'text',
        contentType: mediaType,
        value: typeof request.body === 'string' ? request.body : '',
      };
    // A resource is handed over as parsed, not validated: validation guards what is stored, and
    // bots are often the code that repairs what a sender got wrong (CONTRACT.md). MedplumClient's
    // executeBot sends any object as application/fhir+json unless told otherwise.
    case 'application/json':
    case 'application/fhir+json':
      return { kind: 'json', contentType: mediaType, value: jsonBody(request) };
    case 'application/x-www-form-urlencoded':
      return {
        kind: 'json',
        contentType: mediaType,
        value: firstValues(new URLSearchParams(request.rawBody ?? ''), []),
      };
    default:
      return { kind: 'hl7', contentType: mediaType, value: hl7Body(request) };
  }
}

/** A body the parser could not read as JSON never got this far (400 there); an empty one is refused here. */
function jsonBody(request: { body?: unknown; rawBody?: string }): unknown {
  if (request.rawBody === undefined || request.rawBody.trim() === '')
    throw fhirError(400, 'required', 'The request has no body');
  return request.body;
}

function hl7Body(request: { body?: unknown }): string {
  const text = typeof request.body === 'string' ? request.body : '';
  try {
    Hl7Message.parse(text);
  } catch (error) {
    throw fhirError(
      400,
      'structure',
      `The body is not an HL7 v2 message: ${(error as Error).message}`,
    );
  }
  return text;
}

/**
 * An object of strings: the first value of each key (repeated keys keep the first). Every key
 * is the client's own, `__proto__`, `constructor` and `toString` too: `key in {}` would take them
 * for present, and assigning `__proto__` would set no property at all.
 */
function firstValues(params: URLSearchParams, ignored: readonly string[]): Record<string, string> {
  const first = new Map<string, string>();
  for (const [key, value] of params) {
    if (!ignored.includes(key) && !first.has(key)) first.set(key, value);
  }
  return Object.fromEntries(first);
}

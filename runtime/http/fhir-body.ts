import { bodyParser } from '@koa/bodyparser';
import type { Context, Middleware } from 'koa';
import { fhirError } from '../model/fhir-error.js';

export const FHIR_JSON = 'application/fhir+json; charset=utf-8';

/**
 * JSON nested deeper than this is refused: JSON.parse copes with any depth, but the code that
 * walks a body afterwards (GraphQL's variable coercion, JSON.stringify) recurses and overflows
 * the stack some thousands of levels down. A FHIR resource is valid to 100 object levels.
 */
export const MAX_JSON_NESTING = 500;

/** Parses JSON bodies (also `application/fhir+json`) and forms up to the limit; other types stay unparsed. */
export function jsonBodyParser(limit: number): Middleware {
  const parse = jsonAndFormParser(limit);
  return (ctx, next) =>
    parse(ctx, () => {
      checkJsonNesting((ctx.request as { body?: unknown }).body, 'The request body');
      return next();
    });
}

/** 400 when `value` (parsed JSON) nests objects and arrays more than MAX_JSON_NESTING deep. */
export function checkJsonNesting(value: unknown, what: string): void {
  // A stack rather than recursion: the point is to survive any depth.
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > MAX_JSON_NESTING)
      throw fhirError(400, 'structure', `${what} nests more than ${MAX_JSON_NESTING} levels deep`);
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
}

function jsonAndFormParser(limit: number): Middleware {
  return bodyParser({
    enableTypes: ['json', 'form', 'text'],
    // extendTypes replaces the defaults, so application/json is named again.
    extendTypes: {
      json: ['application/json', 'application/fhir+json'],
      text: ['text/plain', 'application/graphql', 'x-application/hl7-v2+er7'],
    },
    jsonLimit: limit,
    formLimit: limit,
    textLimit: limit,
    encoding: 'utf-8',
    onError: (error) => {
      const status = (error as { status?: number }).status;
      if (status === 413)
        throw fhirError(413, 'too-costly', `The request body is larger than ${limit} bytes`);
      throw fhirError(400, 'structure', `The request body is not valid JSON: ${error.message}`);
    },
  });
}

/** The body of a write: FHIR JSON, or 415 / 400 saying what is wrong. */
export function resourceBody(ctx: Context): unknown {
  if (!ctx.is('application/fhir+json', 'application/json')) {
    throw fhirError(
      415,
      'not-supported',
      `Content-Type must be application/fhir+json, not ${ctx.get('Content-Type') || 'missing'}`,
    );
  }
  const body = (ctx.request as { body?: unknown }).body;
  if (
    body === undefined ||
    body === null ||
    (typeof body === 'object' &&
      Object.keys(body).length === 0 &&
      !Array.isArray(body) &&
      ctx.request.length === 0)
  ) {
    throw fhirError(400, 'required', 'The request has no body');
  }
  return body;
}

import { bodyParser } from '@koa/bodyparser';
import type { Context, Middleware } from 'koa';
import { fhirError } from '../model/fhir-error.js';
import { checkJsonNesting } from '../model/json-nesting.js';

export { checkJsonNesting, MAX_JSON_NESTING } from '../model/json-nesting.js';

export const FHIR_JSON = 'application/fhir+json; charset=utf-8';

/** Parses JSON bodies (also `application/fhir+json` and JSON Patch) and forms up to the limit; other types stay unparsed. */
export function jsonBodyParser(limit: number): Middleware {
  const parse = jsonAndFormParser(limit);
  return (ctx, next) =>
    parse(ctx, () => {
      checkJsonNesting((ctx.request as { body?: unknown }).body, 'The request body');
      return next();
    });
}

function jsonAndFormParser(limit: number): Middleware {
  return bodyParser({
    enableTypes: ['json', 'form', 'text'],
    // extendTypes replaces the defaults, so application/json is named again.
    extendTypes: {
      json: ['application/json', 'application/fhir+json', 'application/json-patch+json'],
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
  return bodyOfType(ctx, ['application/fhir+json', 'application/json'], 'application/fhir+json');
}

/** The body of a PATCH: JSON Patch (RFC 6902), or 415 / 400 saying what is wrong. */
export function jsonPatchBody(ctx: Context): unknown {
  return bodyOfType(
    ctx,
    ['application/json-patch+json'],
    'application/json-patch+json (JSON Patch; FHIRPath Patch is not supported)',
  );
}

function bodyOfType(ctx: Context, types: string[], expected: string): unknown {
  if (!ctx.is(types)) {
    throw fhirError(
      415,
      'not-supported',
      `Content-Type must be ${expected}, not ${ctx.get('Content-Type') || 'missing'}`,
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

import type { Middleware } from 'koa';
import { DatabaseUnavailableError } from '../store/database.js';
import { WriteOperationError } from '../store/resource-store.js';
import { ResourceValidationError } from '../validation/validation-issue.js';
import { SearchValueError } from '../search/search-value.js';
import { UnsupportedSearchError } from '../store/search-sql-params.js';
import { FhirError, fhirError } from './fhir-error.js';
import { FHIR_JSON } from './fhir-body.js';

/**
 * Text PostgreSQL cannot hold: U+0000 in a text value (22021) or a jsonb string (22P05). Only a
 * client puts it there — in an id, a search value, a client id, a name — and no stored value can
 * ever contain it, so it is the client's error wherever it turns up.
 */
const UNSTORABLE_TEXT_CODES = new Set(['22021', '22P05']);
/**
 * PostgreSQL's program_limit_exceeded: on a write, a searchable value (an identifier, a name)
 * too long for a B-tree index entry (about 2.7 kB compressed). The resource is valid FHIR that
 * this server cannot index, which FHIR answers with 422.
 */
const PROGRAM_LIMIT_EXCEEDED = '54000';

/**
 * The one place where thrown errors become responses: FHIR errors with their status and
 * OperationOutcome; validation, search-value and unsupported-search errors, and text the store
 * cannot hold, as 400; values too long to index as 422; store outages as 503; everything else as
 * 500 without its internal message.
 */
export function errorMiddleware(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      const error = toFhirError(thrown);
      if (error.status >= 500) ctx.app.emit('error', thrown, ctx);
      ctx.status = error.status;
      ctx.set(error.headers);
      ctx.type = FHIR_JSON;
      ctx.body = error.outcome;
    }
  };
}

export function toFhirError(thrown: unknown): FhirError {
  if (thrown instanceof WriteOperationError) return toFhirError(thrown.reason);
  if (thrown instanceof FhirError) return thrown;
  if (thrown instanceof ResourceValidationError) {
    return new FhirError(
      400,
      thrown.issues.map((i) => ({
        severity: 'error',
        code: i.code,
        diagnostics: i.diagnostics,
        expression: [i.expression],
      })),
    );
  }
  if (thrown instanceof SearchValueError)
    return fhirError(400, 'invalid', thrown.message, thrown.argument);
  // A search the store cannot answer (`_id:text`): the client asked for it; it is no fault here.
  if (thrown instanceof UnsupportedSearchError)
    return fhirError(400, 'not-supported', thrown.message);
  // Every engine error that means "out of reach" arrives as one (database.ts classifies them).
  if (thrown instanceof DatabaseUnavailableError) {
    return fhirError(503, 'transient', 'The database is not available; try again shortly');
  }
  const code = (thrown as { code?: string }).code;
  if (code === PROGRAM_LIMIT_EXCEEDED) {
    return fhirError(422, 'too-costly', 'A searchable value is too long for the search index');
  }
  if (code && UNSTORABLE_TEXT_CODES.has(code)) {
    return fhirError(400, 'invalid', 'The request holds U+0000, which no value here can contain');
  }
  const status = (thrown as { status?: number; expose?: boolean }).status;
  if (status && status >= 400 && status < 500 && (thrown as { expose?: boolean }).expose) {
    return fhirError(status, status === 413 ? 'too-costly' : 'invalid', (thrown as Error).message);
  }
  return fhirError(500, 'exception', 'Internal server error');
}

/**
 * A path under `prefix` that no route answered (404), or answered for other methods only (405,
 * or 501 for a method no route knows): an OperationOutcome too, as every FHIR failure is.
 */
export function outcomeWhenUnanswered(prefix: string): Middleware {
  const lowerPrefix = prefix.toLowerCase();
  return async (ctx, next) => {
    await next();
    const path = ctx.path.toLowerCase();
    const under = path === lowerPrefix || path.startsWith(`${lowerPrefix}/`);
    if (!under || ctx.body != null || ctx.status < 400) return;
    const status = ctx.status;
    const error =
      status === 404
        ? fhirError(404, 'not-found', `There is nothing at ${ctx.path}`)
        : fhirError(status, 'not-supported', `${ctx.method} is not supported at ${ctx.path}`);
    ctx.type = FHIR_JSON;
    ctx.body = error.outcome;
    // Setting a body on an implicit 404 would make it a 200.
    ctx.status = status;
  };
}

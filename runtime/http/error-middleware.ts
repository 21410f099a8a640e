import type { Middleware } from 'koa';
import { FhirError, fhirError, toFhirError } from '../model/fhir-error.js';
import { FHIR_JSON } from './fhir-body.js';

/**
 * The one place where thrown errors become responses: FHIR errors (from every layer, the store's
 * classified database errors among them) with their status and OperationOutcome; Koa's own
 * client errors (a body too large, malformed) as 4xx; everything else as 500 without its
 * internal message.
 */
export function errorMiddleware(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (thrown) {
      const error = responseError(thrown);
      if (error.status >= 500) ctx.app.emit('error', thrown, ctx);
      ctx.status = error.status;
      ctx.set(error.headers);
      ctx.type = FHIR_JSON;
      ctx.body = error.outcome;
    }
  };
}

/** Koa's and its body parser's client errors (http-errors marked `expose`), else toFhirError. */
function responseError(thrown: unknown): FhirError {
  const { status, expose } = thrown as { status?: number; expose?: boolean };
  if (!(thrown instanceof FhirError) && expose && status && status >= 400 && status < 500)
    return fhirError(status, status === 413 ? 'too-costly' : 'invalid', (thrown as Error).message);
  return toFhirError(thrown);
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

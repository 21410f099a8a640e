/**
 * One log line and one metrics observation per request. Logged: request id, project id, route
 * pattern (never the raw URL, whose query string may hold credentials), method, status and
 * duration. Never headers or bodies.
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';
/** An incoming request id is kept when it is a plain token; anything else is replaced. */
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** The route label of requests no route matched (404s, refusals before routing). */
export const UNMATCHED_ROUTE = '(unmatched)';

export interface RequestState {
  requestId?: string;
  access?: { projectId?: string };
}

export function requestLogging(logger: Logger, metrics?: Metrics): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const incoming = ctx.get(REQUEST_ID_HEADER);
    const requestId = SANE_ID.test(incoming) ? incoming : randomUUID();
    const state = ctx.state as RequestState;
    state.requestId = requestId;
    ctx.set(REQUEST_ID_HEADER, requestId);
    try {
      await next();
    } finally {
      const durationMs = Math.round((performance.now() - started) * 100) / 100;
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const labels = {
        method: ctx.method,
        route: typeof route === 'string' ? route : UNMATCHED_ROUTE,
        status: String(ctx.status),
      };
      metrics?.observeRequest(labels, durationMs);
      logger.info(
        {
          requestId,
          ...(state.access?.projectId ? { projectId: state.access.projectId } : {}),
          ...labels,
          status: ctx.status,
          durationMs,
        },
        'request',
      );
    }
  };
}

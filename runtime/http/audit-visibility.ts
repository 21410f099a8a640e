/**
 * A request that may read AuditEvents first waits for the AuditEvents of the bot executions its
 * project ran before it, which the audit log writes in batches after their responses: a client
 * that runs a bot and then searches for its AuditEvent finds it. Such requests are those under
 * `AuditEvent`, at the base (whole-system search and history, Bundles) and GraphQL queries that
 * name AuditEvent; nothing waits while no AuditEvent of the project is waiting to be written.
 */
import type { Context, Middleware } from 'koa';
import type { AuditLog } from '../bots/audit-log.js';
import type { RequestState } from '../observability/request-logging.js';
import { FHIR_BASE } from './fhir-routes.js';

export function auditVisibility(audit: AuditLog): Middleware {
  return async (ctx, next) => {
    const projectId = (ctx.state as RequestState).access?.projectId;
    if (projectId && mayReadAuditEvents(ctx)) await audit.settledFor(projectId);
    await next();
  };
}

function mayReadAuditEvents(ctx: Context): boolean {
  if (!ctx.path.startsWith(FHIR_BASE)) return false;
  const path = ctx.path.slice(FHIR_BASE.length);
  if (path.endsWith('/$graphql')) {
    const text =
      ctx.method === 'GET' ? ctx.query.query : (ctx.request as { rawBody?: unknown }).rawBody;
    return String(text ?? '').includes('AuditEvent');
  }
  return (
    path === '' ||
    path === '/' ||
    path.startsWith('/_history') ||
    path.startsWith('/_search') ||
    path.startsWith('/AuditEvent')
  );
}

/**
 * A request that may read AuditEvents first waits for the AuditEvents of the bot executions its
 * project ran before it, which the audit log writes in batches after their responses: a client
 * that runs a bot and then searches for its AuditEvent finds it. Such requests are those under
 * `AuditEvent` or at the base (whole-system search and history, Bundles), and those whose query
 * string or body names AuditEvent (`_include`, `_revinclude`, GraphQL); nothing waits while no
 * AuditEvent of the project is waiting to be written.
 */
import type { Context, Middleware } from 'koa';
import type { AuditLog } from '../bots/audit-log.js';
import type { RequestState } from './request-logging.js';
import { FHIR_BASE } from '../model/fhir-base.js';

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
  const body = (ctx.request as { rawBody?: unknown }).rawBody;
  return (
    path === '' ||
    path === '/' ||
    path.startsWith('/_history') ||
    path.startsWith('/_search') ||
    path.startsWith('/AuditEvent') ||
    ctx.querystring.includes('AuditEvent') ||
    (typeof body === 'string' && body.includes('AuditEvent'))
  );
}

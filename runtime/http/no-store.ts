/**
 * Answers of the FHIR API and the admin API hold patients' data, or clients and their secrets:
 * no cache, shared or a browser's, may keep them (`Cache-Control: no-store`, as security reviews
 * ask of such answers: OWASP ASVS V8.2.1). Set before the routes run, so that error answers carry
 * it too; a route whose answer may be kept sets its own (the GraphQL SDL, the playground's page).
 * Conditional requests (`If-None-Match`, `If-Modified-Since`) a client sends itself still work.
 */
import type { Middleware } from 'koa';

export function noStore(paths: readonly string[]): Middleware {
  const covers = (path: string) =>
    paths.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  return (ctx, next) => {
    if (covers(ctx.path)) ctx.set('Cache-Control', 'no-store');
    return next();
  };
}

/**
 * Conditional reads (FHIR R4 `conditionalRead: full-support`): a GET or HEAD of a resource or a
 * version answers 304, without a body, when the client's copy is current — `If-None-Match` names
 * its version (`W/"3"`; weak comparison, so `"3"` too; or `*`), or, with no `If-None-Match`,
 * `If-Modified-Since` is not before its last update, to the second as `Last-Modified` says it.
 * @see https://hl7.org/fhir/R4/http.html#cread
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
import type { Context } from 'koa';

export function clientCopyIsCurrent(
  ctx: Context,
  versionId: string | undefined,
  lastUpdated: string | undefined,
): boolean {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
  const ifNoneMatch = ctx.get('If-None-Match');
  if (ifNoneMatch) {
    if (ifNoneMatch.trim() === '*') return true;
    if (versionId === undefined) return false;
    return ifNoneMatch
      .split(',')
      .some((tag) => tag.trim().replace(/^W\//, '') === `"${versionId}"`);
  }
  const ifModifiedSince = ctx.get('If-Modified-Since');
  if (!ifModifiedSince || lastUpdated === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  // An unreadable date is ignored, as RFC 9110 says.
  if (Number.isNaN(since)) return false;
  return Math.floor(Date.parse(lastUpdated) / 1000) * 1000 <= since;
}

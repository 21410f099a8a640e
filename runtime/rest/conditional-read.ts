/**
 * Conditional reads (FHIR R4 `conditionalRead: full-support`): a read of a resource or a version
 * answers 304, without the resource, when the client's copy is current — `If-None-Match` names
 * its version (`W/"3"`; weak comparison, so `"3"` too; or `*`), or, with no `If-None-Match`,
 * `If-Modified-Since` is not before its last update, to the second as `Last-Modified` says it.
 * Over HTTP the conditions are headers; in a Bundle, a GET entry's `request.ifNoneMatch` and
 * `request.ifModifiedSince`.
 * @see https://hl7.org/fhir/R4/http.html#cread
 * @see https://www.rfc-editor.org/rfc/rfc9110#section-13.2.2
 */
import type { FhirResource } from '../model/fhir-resource.js';

export interface ReadConditions {
  readonly ifNoneMatch?: string;
  readonly ifModifiedSince?: string;
}

/** A resource's `meta.versionId` and `meta.lastUpdated`, when it has them. */
export function versionOf(resource: FhirResource): { versionId?: string; lastUpdated?: string } {
  return (resource.meta as { versionId?: string; lastUpdated?: string } | undefined) ?? {};
}

export function clientCopyIsCurrent(conditions: ReadConditions, resource: FhirResource): boolean {
  const { versionId, lastUpdated } = versionOf(resource);
  const { ifNoneMatch, ifModifiedSince } = conditions;
  if (ifNoneMatch) {
    if (ifNoneMatch.trim() === '*') return true;
    if (versionId === undefined) return false;
    return ifNoneMatch
      .split(',')
      .some((tag) => tag.trim().replace(/^W\//, '') === `"${versionId}"`);
  }
  if (!ifModifiedSince || lastUpdated === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  // An unreadable date is ignored, as RFC 9110 says.
  if (Number.isNaN(since)) return false;
  return Math.floor(Date.parse(lastUpdated) / 1000) * 1000 <= since;
}

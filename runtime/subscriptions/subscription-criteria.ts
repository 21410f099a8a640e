/**
 * A Subscription's `criteria`, `Type?param=value&…` (or `Type` alone: every resource of the
 * type), read by the REST search's own parser: what a REST search refuses, a Subscription refuses,
 * and a criterion matches exactly what the same search would find.
 * @see http://hl7.org/fhir/R4/subscription.html#2.46.6.1
 */
import { searchableTypes } from '../../generated/search/index.js';
import { FhirError, fhirError } from '../model/fhir-error.js';
import { parseSearchRequest, type SearchRequestParameters } from '../rest/search-request.js';

export interface SubscriptionCriteria {
  readonly resourceType: string;
  readonly query: URLSearchParams;
  readonly request: SearchRequestParameters;
}

/** Parameters that shape a search's answer, not which resources match: no use to a filter. */
const RESULT_PARAMETERS = new Set([
  '_count',
  '_offset',
  '_sort',
  '_total',
  '_summary',
  '_elements',
  '_include',
  '_revinclude',
  '_format',
  '_pretty',
]);

/** A match needs one resource at most; the limits only bound `_count`, which criteria refuse. */
const LIMITS = { defaultCount: 1, maxCount: 1 };

export function parseCriteria(text: string): SubscriptionCriteria {
  const [resourceType, queryText = ''] = text.split(/\?(.*)/s, 2);
  if (!searchableTypes.has(resourceType))
    throw invalid(
      `"${text}" does not start with a resource type this server knows (expected Type?param=value)`,
    );
  // Every delivery writes an AuditEvent: a Subscription on them would feed itself.
  if (resourceType === 'AuditEvent')
    throw invalid('Subscriptions on AuditEvent are not supported: each delivery writes one');
  const query = new URLSearchParams(queryText);
  for (const name of query.keys())
    if (RESULT_PARAMETERS.has(name))
      throw invalid(`${name} shapes a search's answer; criteria only choose which resources match`);
  try {
    return { resourceType, query, request: parseSearchRequest(resourceType, query, LIMITS) };
  } catch (error) {
    if (!(error instanceof FhirError)) throw error;
    throw invalid(error.message);
  }
}

function invalid(message: string) {
  return fhirError(400, 'invalid', `Subscription.criteria: ${message}`, 'Subscription.criteria');
}

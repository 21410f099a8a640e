/**
 * The search of a conditional write (`If-None-Exist`, `PUT Type?…`, `DELETE Type?…`): parsed with
 * the REST search's own rules, so that an unknown or invalid parameter is a 400 and never a
 * search that matches everything; a condition with no criteria at all is refused too. Writes of
 * one condition run one after another, in every process on the database: each takes a lock on
 * its condition (the project, the type and the parameters in a canonical order) before it
 * searches, and holds it until its transaction ends.
 * @see http://hl7.org/fhir/R4/http.html#cond-update
 */
import type { FhirResource } from '../model/fhir-resource.js';
import { fhirError } from '../model/fhir-error.js';
import type { Transaction } from '../store/database.js';
import { searchResources, type SearchSource } from '../store/search-store.js';
import { lockForTransaction } from '../store/transaction-checks.js';
import {
  parseSearchRequest,
  type SearchLimits,
  type SearchRequestParameters,
} from './search-request.js';

export interface SearchCondition {
  readonly resourceType: string;
  /** As the client wrote it, for messages. */
  readonly text: string;
  readonly query: URLSearchParams;
  readonly request: SearchRequestParameters;
}

/**
 * `identifier=urn:x|1` (or `Patient?identifier=…`, as If-None-Exist may be written) → the
 * condition; 400 naming `what` when it has no search criteria.
 */
export function parseCondition(
  resourceType: string,
  text: string,
  limits: SearchLimits,
  what: string,
): SearchCondition {
  const query = new URLSearchParams(text.replace(/^[^=&?]*\?/, ''));
  const request = parseSearchRequest(resourceType, query, limits);
  if (request.criteria.length === 0)
    throw fhirError(400, 'invalid', `${what} needs at least one search parameter`);
  return { resourceType, text: decodeURIComponent(query.toString()), query, request };
}

/** Serialises conditional writes of one condition (lockForTransaction's lock space). */
const CONDITIONAL_LOCK = 7_215_004;

/**
 * Waits for, then holds until `tx` ends, the lock of each condition. Several are taken in one
 * order, so that two transactions locking the same ones cannot wait on each other for good.
 */
export async function lockConditions(
  tx: Transaction,
  projectId: string,
  conditions: readonly SearchCondition[],
): Promise<void> {
  const keys = [...new Set(conditions.map((c) => conditionKey(projectId, c)))].sort();
  for (const key of keys) await lockForTransaction(tx, CONDITIONAL_LOCK, key);
}

/** The project and the normalized condition: one key for one condition. */
function conditionKey(projectId: string, condition: SearchCondition): string {
  return `${projectId}\n${normalizedCondition(condition)}`;
}

/** The type and the query's parameters, decoded and sorted: one text however the query is spelled. */
export function normalizedCondition(condition: SearchCondition): string {
  const parameters = [...condition.query].map(([name, value]) => `${name}=${value}`).sort();
  return [condition.resourceType, ...parameters].join('\n');
}

/** No resource, the one resource the condition matches, or 412 naming `what` when several do. */
export async function findMatch(
  source: SearchSource,
  projectId: string,
  condition: SearchCondition,
  what: string,
): Promise<FhirResource | undefined> {
  const matches = await findMatches(source, projectId, condition, 2);
  if (matches.length > 1)
    throw fhirError(
      412,
      'duplicate',
      `${what}: ${condition.text} matches more than one ${condition.resourceType}`,
    );
  return matches[0];
}

/** Up to `count` of the resources the condition matches, in no particular order. */
export async function findMatches(
  source: SearchSource,
  projectId: string,
  condition: SearchCondition,
  count: number,
): Promise<readonly FhirResource[]> {
  const { matches } = await searchResources(source, projectId, condition.resourceType, {
    ...condition.request,
    count,
    offset: 0,
    sort: [],
    total: 'none',
    summaryCount: false,
    include: [],
    revinclude: [],
  });
  return matches;
}

/**
 * R4's overlap rule for a transaction: "If any resource identities (including resolved identities
 * from conditional update/delete) overlap in steps 1-3, then the transaction SHALL fail." One
 * resource, or a refused transaction (400 naming the entries); never two resources for one. It is
 * checked twice, both in the transaction, so that a refusal stores nothing:
 * - before anything is written (assertNoOverlap): no two entries name one resource — by id, once
 *   conditional entries are resolved — and no two would create the resource of one condition
 *   (its type and parameters, however spelled), which no search can tell apart yet: two
 *   conditional updates that match nothing, or one and a conditional create. Conditional creates
 *   are the exception among themselves: those that find a resource answer with it and write
 *   nothing, and those of one condition make one create (each sees the ones before it).
 * - after every entry is written (assertConditionsHold): the condition of each conditional create
 *   and update matches one resource at most, which also catches entries of different conditions
 *   (or a plain write) that made a second resource for one — what would leave every later
 *   conditional write of that condition to a 412.
 * @see http://hl7.org/fhir/R4/http.html#trules
 */
import { FhirError } from '../model/fhir-error.js';
import type { SearchSource } from '../store/search-store.js';
import type { BundleEntry, ParsedEntry } from './bundle-entry.js';
import { findMatches, normalizedCondition } from './search-condition.js';
import { conditionOf, isResolvable } from './transaction-targets.js';

/** A resource, or a condition's new resource, that an entry names. */
interface Claim {
  readonly key: string;
  readonly names: string;
  readonly index: number;
  /** Conditional creates may share what they name with each other, and only with each other. */
  readonly shared: boolean;
}

/** Request URLs are echoed in messages up to this length. */
const LABEL_LENGTH = 200;

/**
 * 400 when two entries name one resource. `requested`: the entries as parsed; `resolved`: the same
 * with conditional ones resolved (transaction-targets.ts).
 */
export function assertNoOverlap(
  entries: readonly BundleEntry[],
  requested: readonly ParsedEntry[],
  resolved: readonly ParsedEntry[],
): void {
  const seen = new Map<string, Claim>();
  resolved.forEach((entry, index) => {
    for (const claim of claimsOf(requested[index], entry, index)) {
      const first = seen.get(claim.key);
      if (first === undefined) seen.set(claim.key, claim);
      else if (!(first.shared && claim.shared))
        throw overlap(
          [first.index, index],
          `${label(entries, first.index)} and ${label(entries, index)} both name ${claim.names}: a transaction names each resource once`,
        );
    }
  });
}

function claimsOf(requested: ParsedEntry, resolved: ParsedEntry, index: number): Claim[] {
  const claims: Claim[] = [];
  if (isResolvable(requested) && requested.method !== 'DELETE') {
    const condition = conditionOf(requested);
    claims.push({
      key: `?${normalizedCondition(condition)}`,
      names: `the ${condition.resourceType} of ${condition.text}`,
      index,
      shared: requested.method === 'POST',
    });
  }
  // A create that found nothing makes a resource of its own; a delete that found nothing, none.
  if (!('id' in resolved) || (resolved.method === 'POST' && resolved.match === undefined))
    return claims;
  const reference = `${resolved.resourceType}/${resolved.id}`;
  claims.push({ key: reference, names: reference, index, shared: resolved.method === 'POST' });
  return claims;
}

/**
 * 400 when, once every entry is written in `source`'s transaction, a conditional create's or
 * update's condition matches more than one resource. `written`: `Type/id` → the entry that wrote it.
 */
export async function assertConditionsHold(
  source: SearchSource,
  projectId: string,
  entries: readonly BundleEntry[],
  requested: readonly ParsedEntry[],
  written: ReadonlyMap<string, number>,
): Promise<void> {
  const checked = new Set<string>();
  for (const [index, entry] of requested.entries()) {
    if (!isResolvable(entry) || entry.method === 'DELETE') continue;
    const condition = conditionOf(entry);
    const key = normalizedCondition(condition);
    if (checked.has(key)) continue;
    checked.add(key);
    const matches = await findMatches(source, projectId, condition, 2);
    if (matches.length < 2) continue;
    const writers = matches.flatMap((match) => {
      const writer = written.get(`${match.resourceType}/${match.id}`);
      return writer === undefined ? [] : [writer];
    });
    const indexes = [...new Set([index, ...writers])].sort((a, b) => a - b);
    throw overlap(
      indexes,
      `After ${indexes.map((i) => label(entries, i)).join(' and ')}, more than one ${condition.resourceType} matches ${condition.text}: a transaction leaves one resource for each condition of its conditional creates and updates`,
    );
  }
}

/** An entry as a refusal names it: its index and its request as the client wrote it. */
function label(entries: readonly BundleEntry[], index: number): string {
  const { method, url, ifNoneExist } = entries[index].request!;
  const request = `${method} ${url}${ifNoneExist === undefined ? '' : `, ifNoneExist ${ifNoneExist}`}`;
  const bounded = request.length > LABEL_LENGTH ? `${request.slice(0, LABEL_LENGTH)}…` : request;
  return `Bundle.entry[${index}] (${bounded})`;
}

function overlap(indexes: readonly number[], diagnostics: string): FhirError {
  return new FhirError(400, [
    {
      severity: 'error',
      code: 'invalid',
      diagnostics,
      expression: indexes.map((i) => `Bundle.entry[${i}]`),
    },
  ]);
}

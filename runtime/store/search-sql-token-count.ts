/**
 * The total of a search by one token value, from the counts kept as the index is written
 * (migrations/014, token-count-writes.ts) instead of from its matches' index rows: the sum of a
 * few delta rows, however many resources match.
 *
 * Only a search that is exactly one token criterion with one value (`system|value`, `|value`, or
 * `value` in any system) and no modifier: anything else keeps the count of the matches
 * (search-sql.ts). A search's access reaches it only as its project and its resource type, both
 * part of a count's key: scopes allow or refuse a type whole (runtime/access/), and a project sees
 * only its own rows. A restriction within a type (a compartment, say) would have to reach the
 * store as a further criterion, which turns this path off.
 * @see http://hl7.org/fhir/R4/search.html#token
 */
import type { IndexMatch, OneTokenValue } from './search-sql-criteria.js';
import type { SqlContext } from './search-sql-params.js';

/**
 * `SELECT … AS total` from the kept counts of `match`'s code and `value` (its `tokenValue`), in a
 * context of its own. Rows for a value in one system count its resources there; the value's
 * any-system rows take off what a resource with it in several systems added more than once
 * (migrations/014), so the sum of all the value's rows counts each resource with it once.
 */
export function keptTokenCount(
  context: SqlContext,
  match: IndexMatch,
  value: OneTokenValue,
): string {
  const { params, project, resourceType } = context;
  const conditions = [
    `c.project_id = ${project}`,
    `c.resource_type = ${resourceType}`,
    `c.code = ${params.add(match.code, 'text')}`,
    `c.value = ${params.add(value.code, 'text')}`,
  ];
  if (value.system !== undefined) {
    conditions.push('NOT c.any_system');
    conditions.push(
      value.system === '' ? 'c.system IS NULL' : `c.system = ${params.add(value.system, 'text')}`,
    );
  }
  return (
    `SELECT coalesce(sum(c.delta), 0)::integer AS total FROM search_token_count c\n` +
    `WHERE ${conditions.join(' AND ')}`
  );
}

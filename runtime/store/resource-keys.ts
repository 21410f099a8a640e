/**
 * SQL that matches rows by (resource_type, id) pairs. Joining against the pairs as a row set
 * (jsonb_to_recordset, unnest) lets the planner choose a sequential scan of the whole table —
 * it cannot see how few pairs there are — which costs milliseconds on a table of thousands of
 * rows. One `resource_type = … AND id IN (…)` per type, ORed, is an index scan per type.
 *
 * The ids are listed one parameter each, their number rounded up to a power of two (the last id
 * repeated), up to LISTED_MAX; past it, one array parameter. PostgreSQL estimates an array
 * parameter at 10 elements: for the 1–5 ids of a usual read its kept (generic) plan looked
 * costlier than one made for the actual ids, so it planned every execution anew. A list of
 * parameters is estimated by its length, the plan is kept, and the statement texts stay few.
 */
export interface ResourceKey {
  readonly resourceType: string;
  readonly id: string;
}

/**
 * The condition on `alias.resource_type` and `alias.id`; its parameters are appended to `values`
 * (the text names them by position, so `values` must hold exactly the statement's earlier ones).
 */
export function resourceKeysCondition(
  alias: string,
  keys: readonly ResourceKey[],
  values: unknown[],
): string {
  const idsByType = new Map<string, string[]>();
  for (const { resourceType, id } of keys) {
    const ids = idsByType.get(resourceType);
    if (ids) ids.push(id);
    else idsByType.set(resourceType, [id]);
  }
  if (idsByType.size === 0) return 'false';
  const conditions = [...idsByType].map(([resourceType, ids]) => {
    values.push(resourceType);
    return `(${alias}.resource_type = $${values.length}::text AND ${idsCondition(alias, ids, values)})`;
  });
  return conditions.length === 1 ? conditions[0] : `(${conditions.join(' OR ')})`;
}

export function resourceKey(resourceType: string, id: string): string {
  return `${resourceType}/${id}`;
}

/** Ids listed one parameter each at most; more go in one array parameter. */
const LISTED_MAX = 32;

/** `items` padded to a power of two by repeating the last; undefined past LISTED_MAX. */
function listedPadded<T>(items: readonly T[]): T[] | undefined {
  if (items.length > LISTED_MAX) return undefined;
  const listed = 2 ** Math.ceil(Math.log2(items.length));
  return Array.from({ length: listed }, (_, i) => items[Math.min(i, items.length - 1)]);
}

function idsCondition(alias: string, ids: readonly string[], values: unknown[]): string {
  const listed = listedPadded(ids);
  if (!listed) {
    values.push(ids);
    return `${alias}.id = ANY($${values.length}::text[])`;
  }
  const params = listed.map((id) => `$${values.push(id)}::text`);
  return params.length === 1
    ? `${alias}.id = ${params[0]}`
    : `${alias}.id IN (${params.join(', ')})`;
}

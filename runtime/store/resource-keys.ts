/**
 * SQL that matches rows by (resource_type, id) pairs. Joining against the pairs as a row set
 * (jsonb_to_recordset, unnest) lets the planner choose a sequential scan of the whole table —
 * it cannot see how few pairs there are — which costs milliseconds on a table of thousands of
 * rows. One `resource_type = … AND id = ANY(…)` per type, ORed, is an index scan per type.
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
    values.push(resourceType, ids);
    return `(${alias}.resource_type = $${values.length - 1}::text AND ${alias}.id = ANY($${values.length}::text[]))`;
  });
  return conditions.length === 1 ? conditions[0] : `(${conditions.join(' OR ')})`;
}

export function resourceKey(resourceType: string, id: string): string {
  return `${resourceType}/${id}`;
}

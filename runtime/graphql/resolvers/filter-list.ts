/**
 * A repeating element with filter arguments: `name(use: official)`, `extension(url: "…")`,
 * `name(fhirpath: "family.exists()")`, `entry(_count: 5, _offset: 5)`. Filters apply first, then
 * `_offset`, then `_count`. A list that keeps nothing is null: FHIR has no empty lists, and the
 * reference engine omits the element (conformance case extension-complex-out).
 * @see http://hl7.org/fhir/R4/graphql.html#list
 */
import type { GraphQLFieldResolver } from 'graphql';
import { compileFhirPath, fhirPathOf } from '../compile-fhirpath.js';
import { rememberContainer } from '../contained.js';

type Item = Record<string, unknown>;
type FilterArgs = Record<string, string | string[] | number | undefined>;

export const filterList: GraphQLFieldResolver<Item, unknown, FilterArgs> = async (
  parent,
  args,
  _context,
  info,
) => {
  const items = parent[info.fieldName];
  if (!Array.isArray(items)) return items;
  const { fhirpath: expression, _count: count, _offset: offset, ...byValue } = args;
  let kept = (items as Item[]).filter((item) => matchesValues(item, byValue));
  if (typeof expression === 'string') {
    const base = fhirPathOf(info.parentType.name, info.fieldName);
    const evaluate = await compileFhirPath(expression, base);
    kept = kept.filter((item) => isTrue(evaluate(item)));
  }
  const start = typeof offset === 'number' ? Math.max(0, offset) : 0;
  kept = kept.slice(start, typeof count === 'number' ? start + Math.max(0, count) : undefined);
  rememberContainer(kept, parent, info.fieldName);
  return kept.length > 0 ? kept : null;
};

/** Every given value must be among the child's values (a repeating child matches on any item). */
function matchesValues(item: Item, byValue: FilterArgs): boolean {
  return Object.entries(byValue).every(([child, wanted]) => {
    if (wanted === undefined) return true;
    const present = ([] as unknown[]).concat(item[child] ?? []).map(String);
    return ([] as unknown[]).concat(wanted).every((value) => present.includes(String(value)));
  });
}

/** FHIRPath's boolean reading of a collection: a single true. */
function isTrue(result: unknown[]): boolean {
  return result.length === 1 && result[0] === true;
}

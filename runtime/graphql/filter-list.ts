/**
 * A repeating element with filter arguments: `name(use: official)`, `extension(url: "…")`,
 * `name(fhirpath: "family.exists()")`, `entry(_count: 5, _offset: 5)`. Filters apply first, then
 * `_offset`, then `_count`. A list that keeps nothing is null: FHIR has no empty lists, and the
 * reference engine omits the element (conformance case extension-complex-out).
 * @see http://hl7.org/fhir/R4/graphql.html#list
 */
import type { GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';
import { compileFhirPath, fhirPathOf } from './compile-fhirpath.js';
import { rememberContainer } from './contained.js';
import type { GraphQLContext } from './graphql-context.js';

type Item = Record<string, unknown>;
type FilterArgs = Record<string, string | number | null | undefined>;

export const filterList: GraphQLFieldResolver<Item, GraphQLContext, FilterArgs> = (
  parent,
  args,
  context,
  info,
) => {
  const items = parent[info.fieldName];
  if (!Array.isArray(items)) return items;
  const { fhirpath: expression, _count: count, _offset: offset, ...byValue } = args;
  // Most lists have no arguments at all (`name { family }`): kept whole, not copied.
  const kept = filtersByValue(byValue)
    ? (items as Item[]).filter((item) => matchesValues(item, byValue))
    : (items as Item[]);
  // Synchronous unless there is a FHIRPath to compile: a promise per list costs the executor.
  if (typeof expression !== 'string') return page(kept, count, offset, parent, context, info);
  const base = fhirPathOf(info.parentType.name, info.fieldName);
  return compileFhirPath(expression, base).then((evaluate) =>
    page(
      kept.filter((item) => isTrue(context.fhirpath.evaluate(evaluate, item))),
      count,
      offset,
      parent,
      context,
      info,
    ),
  );
};

function page(
  kept: Item[],
  count: FilterArgs[string],
  offset: FilterArgs[string],
  parent: Item,
  context: GraphQLContext,
  info: GraphQLResolveInfo,
): Item[] | null {
  const start = typeof offset === 'number' ? Math.max(0, offset) : 0;
  const paged =
    start === 0 && typeof count !== 'number'
      ? kept
      : kept.slice(start, typeof count === 'number' ? start + Math.max(0, count) : undefined);
  if (context.trackContainers !== false) rememberContainer(paged, parent, info.fieldName);
  return paged.length > 0 ? paged : null;
}

function filtersByValue(byValue: FilterArgs): boolean {
  for (const child in byValue) if (byValue[child] != null) return true;
  return false;
}

/** Every given value must be among the child's values (a repeating child matches on any item). */
function matchesValues(item: Item, byValue: FilterArgs): boolean {
  return Object.entries(byValue).every(([child, wanted]) => {
    if (wanted == null) return true;
    const present = ([] as unknown[]).concat(item[child] ?? []).map(String);
    return ([] as unknown[]).concat(wanted).every((value) => present.includes(String(value)));
  });
}

/** FHIRPath's boolean reading of a collection: a single true. */
function isTrue(result: unknown[]): boolean {
  return result.length === 1 && result[0] === true;
}

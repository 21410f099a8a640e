/**
 * A repeating element with filter arguments: `name(use: official)`, `extension(url: "…")`,
 * `name(fhirpath: "family.exists()")`, `entry(_count: 5, _offset: 5)`. Filters apply first, then
 * `_offset`, then `_count`.
 * @see http://hl7.org/fhir/R4/graphql.html#list
 */
import { GraphQLError, type GraphQLFieldResolver } from 'graphql';

type Item = Record<string, unknown>;
type FilterArgs = Record<string, string | string[] | number | undefined>;

const compiled = new Map<string, (item: Item) => unknown[]>();

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
    const evaluate = await compile(expression);
    kept = kept.filter((item) => isTrue(evaluate(item)));
  }
  const start = typeof offset === 'number' ? Math.max(0, offset) : 0;
  return kept.slice(start, typeof count === 'number' ? start + Math.max(0, count) : undefined);
};

/** Every given value must be among the child's values (a repeating child matches on any item). */
function matchesValues(item: Item, byValue: FilterArgs): boolean {
  return Object.entries(byValue).every(([child, wanted]) => {
    if (wanted === undefined) return true;
    const present = ([] as unknown[]).concat(item[child] ?? []).map(String);
    return ([] as unknown[]).concat(wanted).every((value) => present.includes(String(value)));
  });
}

/** The FHIRPath engine loads on first use: it is large, and most queries never need it. */
async function compile(expression: string): Promise<(item: Item) => unknown[]> {
  let evaluate = compiled.get(expression);
  if (!evaluate) {
    const [{ default: fhirpath }, { default: r4Model }] = await Promise.all([
      import('fhirpath'),
      import('fhirpath/fhir-context/r4'),
    ]);
    try {
      evaluate = fhirpath.compile(expression, r4Model) as (item: Item) => unknown[];
    } catch (error) {
      throw new GraphQLError(
        `fhirpath: "${expression}" is not a valid FHIRPath expression: ${(error as Error).message}`,
      );
    }
    compiled.set(expression, evaluate);
  }
  return evaluate;
}

/** FHIRPath's boolean reading of a collection: a single true. */
function isTrue(result: unknown[]): boolean {
  return result.length === 1 && result[0] === true;
}

/**
 * Limits checked on the parsed query before anything runs, each refused with a clear error:
 * depth (nesting of selections, fragments included), searches (list and connection fields,
 * root or reverse), page size (`_count`), and cost (every field costs 1; a search costs 10
 * plus its page size times what it selects; a resource read by id — a root read, a mutation, a
 * resolved reference — costs 20 plus what it selects). Never only logged.
 */
import {
  GraphQLError,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from 'graphql';
import type { QuerySizeLimits } from './prepared-query-cache.js';

export interface QueryLimits extends QuerySizeLimits {
  /** The time a query may spend evaluating FHIRPath (compile-fhirpath.ts). */
  readonly fhirpathBudgetMs: number;
  readonly maxDepth: number;
  readonly maxCost: number;
  readonly maxSearches: number;
  readonly maxPageSize: number;
  readonly defaultPageSize: number;
}

const SEARCH_FIELD = /^[A-Z][A-Za-z]*(List|Connection)$/;
/** At the root, every other field named for a resource type reads or writes one by id. */
const ROOT_RESOURCE_FIELD = /^[A-Z][A-Za-z]*$/;
const SEARCH_COST = 10;
/**
 * A root read or a resolved reference takes as long as tens of plain fields (a promise, a
 * DataLoader key, a row to parse), and reads have no count limit of their own as
 * searches do: at 1, a query of 10,000 aliased reads passed the default limit and ran for seconds.
 */
const RESOURCE_COST = 20;

export function checkQueryLimits(
  document: DocumentNode,
  operationName: string | undefined,
  variables: Readonly<Record<string, unknown>>,
  limits: QueryLimits,
): GraphQLError[] {
  return measureQuery(document, operationName, variables, limits).errors;
}

/** The limits' verdict with the estimated cost (undefined when no operation was selected). */
export function measureQuery(
  document: DocumentNode,
  operationName: string | undefined,
  variables: Readonly<Record<string, unknown>>,
  limits: QueryLimits,
): { readonly cost: number | undefined; readonly errors: GraphQLError[] } {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName
    ? operations.find((o) => o.name?.value === operationName)
    : operations[0];
  if (!operation) return { cost: undefined, errors: [] };
  const fragments = new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((f) => [f.name.value, f]),
  );
  const errors: GraphQLError[] = [];
  let searches = 0;
  let deepest = 0;

  /** `edges`: the selection is a connection's results, which its search has paid for. */
  const measure = (
    set: SelectionSetNode,
    depth: number,
    seen: ReadonlySet<string>,
    edges: boolean,
  ): number => {
    deepest = Math.max(deepest, depth);
    if (depth > limits.maxDepth) return 0;
    let cost = 0;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) cost += fieldCost(selection, depth, seen, edges);
      else if (selection.kind === Kind.INLINE_FRAGMENT)
        cost += measure(selection.selectionSet, depth, seen, edges);
      else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (fragment && !seen.has(name)) cost += spread(fragment, depth, seen, edges);
      }
    }
    return cost;
  };
  // A fragment is measured once per depth, then reused: a document whose fragments each spread
  // the next one twice stands for 2^n fields, and walking them all would never end.
  const measured = new Map<string, { cost: number; searches: number; deepest: number }>();
  const spread = (
    fragment: FragmentDefinitionNode,
    depth: number,
    seen: ReadonlySet<string>,
    edges: boolean,
  ): number => {
    const name = fragment.name.value;
    const key = `${depth} ${edges} ${name}`;
    let found = measured.get(key);
    if (!found) {
      const outer = { searches, deepest };
      searches = 0;
      deepest = 0;
      const cost = measure(fragment.selectionSet, depth, new Set([...seen, name]), edges);
      found = { cost, searches, deepest };
      measured.set(key, found);
      ({ searches, deepest } = outer);
    }
    searches += found.searches;
    deepest = Math.max(deepest, found.deepest);
    return found.cost;
  };
  const fieldCost = (
    field: FieldNode,
    depth: number,
    seen: ReadonlySet<string>,
    edges: boolean,
  ): number => {
    const name = field.name.value;
    const children = field.selectionSet
      ? measure(field.selectionSet, depth + 1, seen, name === 'edges')
      : 0;
    if (!SEARCH_FIELD.test(name)) {
      const readsResource =
        (depth === 1 && ROOT_RESOURCE_FIELD.test(name)) || (name === 'resource' && !edges);
      return (readsResource ? RESOURCE_COST : 1) + children;
    }
    searches++;
    const count = pageSize(field, variables, limits);
    // A negative page would make the cost negative, paying for the rest of the query.
    if (count < 0) {
      errors.push(limitError(`${name}: _count ${count} must be 0 or more`, field));
    } else if (count > limits.maxPageSize) {
      errors.push(
        limitError(
          `${name}: _count ${count} is over the maximum page size of ${limits.maxPageSize}`,
          field,
        ),
      );
    }
    return SEARCH_COST + count * Math.max(1, children);
  };

  const cost = measure(operation.selectionSet, 1, new Set(), false);
  if (deepest > limits.maxDepth)
    errors.push(
      limitError(`The query is nested ${deepest} levels deep; the maximum is ${limits.maxDepth}`),
    );
  if (searches > limits.maxSearches)
    errors.push(
      limitError(`The query has ${searches} searches; the maximum is ${limits.maxSearches}`),
    );
  if (cost > limits.maxCost)
    errors.push(
      limitError(`The query's estimated cost is ${cost}; the maximum is ${limits.maxCost}`),
    );
  return { cost, errors };
}

function pageSize(
  field: FieldNode,
  variables: Readonly<Record<string, unknown>>,
  limits: QueryLimits,
): number {
  const argument = field.arguments?.find((a) => a.name.value === '_count');
  const value = argument ? literal(argument.value, variables) : undefined;
  const count = Number(value);
  return value === undefined || !Number.isFinite(count) ? limits.defaultPageSize : count;
}

function literal(node: ValueNode, variables: Readonly<Record<string, unknown>>): unknown {
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  if (node.kind === Kind.INT || node.kind === Kind.FLOAT || node.kind === Kind.STRING)
    return node.value;
  return undefined;
}

function limitError(message: string, node?: FieldNode): GraphQLError {
  return new GraphQLError(message, { nodes: node, extensions: { code: 'QUERY_LIMIT' } });
}

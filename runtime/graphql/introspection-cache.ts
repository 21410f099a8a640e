/**
 * Introspection of the whole of R4 yields about 50 MB of JSON and takes about two seconds; it
 * depends on the schema alone, never on data or caller. So an introspection-only query is run
 * once per schema and text, and its serialized answer kept (a few at most: they are large).
 */
import { Kind, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';

const CAPACITY = 3;
const answers = new WeakMap<GraphQLSchema, Map<string, string>>();

/** True when the operation selects only `__schema`, `__type` and `__typename` at its root. */
export function isIntrospectionOnly(
  document: DocumentNode,
  operationName: string | undefined,
): boolean {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName
    ? operations.find((o) => o.name?.value === operationName)
    : operations[0];
  if (!operation || operation.operation !== 'query') return false;
  return operation.selectionSet.selections.every(
    (s) => s.kind === Kind.FIELD && s.name.value.startsWith('__'),
  );
}

/** The kept answer for this request, or the one `run` produces (then kept). */
export async function cachedIntrospection(
  schema: GraphQLSchema,
  key: string,
  run: () => Promise<string>,
): Promise<string> {
  let cache = answers.get(schema);
  if (!cache) answers.set(schema, (cache = new Map()));
  const kept = cache.get(key);
  if (kept !== undefined) return kept;
  const answer = await run();
  cache.set(key, answer);
  if (cache.size > CAPACITY) cache.delete(cache.keys().next().value!);
  return answer;
}

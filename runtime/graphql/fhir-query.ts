/**
 * A FHIR GraphQL query from parsed text to result: the FHIR dialect rewritten to standard GraphQL
 * (fhir-dialect.ts), its argument values fitted to the schema's types (argument-literals.ts),
 * validated, executed with a default resolver that tracks enclosing resources
 * (contained.ts) and computes slice keys, and reshaped by FHIR's directives (directives.ts).
 * Plain queries that recur run compiled (compiled-execution.ts).
 * @see http://hl7.org/fhir/R4/graphql.html
 */
import {
  BREAK,
  GraphQLError,
  OverlappingFieldsCanBeMergedRule,
  defaultFieldResolver,
  execute,
  specifiedRules,
  validate,
  visit,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';
import { fitArgumentLiterals } from './argument-literals.js';
import { compiledQuery, executeCompiled } from './compiled-execution.js';
import type { PreparedQuery } from './prepared-query.js';
import type { GraphQLContext } from './graphql-context.js';
import { containerTrackingResolver } from './contained.js';
import {
  applyFhirDirectives,
  evaluateSliceKey,
  hasFhirDirectives,
  sliceKeyPath,
} from './directives.js';
import { MAX_SELECTIONS, countSelections, rewriteFhirDialect } from './fhir-dialect.js';

const RULES_BUT_OVERLAP = specifiedRules.filter((r) => r !== OverlappingFieldsCanBeMergedRule);

/**
 * Validation runs on the rewritten query, except the rule that same-named fields must have the
 * same shape: rewriting puts `name` on Patient (a list of HumanName) and on Organization (a
 * string) in fragments that can never both apply, which that rule would refuse. It runs on the
 * query as written instead. `fromShape`: the document is a query's shape (query-shape.ts).
 */
export function prepareFhirQuery(
  schema: GraphQLSchema,
  document: DocumentNode,
  { fromShape = false } = {},
): PreparedQuery {
  const { document: executable, placeholderTypes } = fitArgumentLiterals(
    schema,
    rewriteFhirDialect(schema, document),
    fromShape,
  );
  const shape = {
    shaped: hasFhirDirectives(document),
    resolvesReferences: selectsField(document, 'resource'),
    placeholderTypes,
  };
  if (countSelections(executable) > MAX_SELECTIONS) {
    const message =
      `Selecting resource fields on Reference.resource without fragments makes this query too ` +
      `large (over ${MAX_SELECTIONS} selections): ` +
      `write \`... on Patient { … }\` for the types you want`;
    const error = new GraphQLError(message, { extensions: { code: 'QUERY_LIMIT' } });
    return { document, executable, errors: [error], ...shape };
  }
  const errors = [
    ...validate(schema, executable, RULES_BUT_OVERLAP),
    ...validate(schema, document, [OverlappingFieldsCanBeMergedRule]),
  ];
  return { document, executable, errors: distinct(errors), ...shape };
}

/** How a query ran: compiled for it, or through graphql-js's interpreter. */
export type ExecutionEngine = 'compiled' | 'interpreted';

export async function executeFhirQuery(
  query: PreparedQuery,
  args: Omit<ExecutionArgs, 'document' | 'fieldResolver'>,
  observe?: (engine: ExecutionEngine) => void,
): Promise<ExecutionResult> {
  const trackContainers = query.resolvesReferences;
  const contextValue = { ...(args.contextValue as object), trackContainers };
  const compiled = compiledQuery(query, args.schema, args.operationName ?? undefined);
  observe?.(compiled ? 'compiled' : 'interpreted');
  if (compiled) return executeCompiled(compiled, { ...args, contextValue });
  const result = await execute({
    ...args,
    contextValue,
    document: query.executable,
    fieldResolver: trackContainers ? trackingFieldResolver : plainFieldResolver,
  });
  if (!result.data || !query.shaped) return result;
  try {
    const data = applyFhirDirectives(result.data, {
      document: query.document,
      operationName: args.operationName ?? undefined,
      variables: args.variableValues ?? undefined,
    });
    return { ...result, data };
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    return { errors: [...(result.errors ?? []), error], data: null };
  }
}

/** `resolve`, except for the computed slice keys of `@slice` (directives.ts). */
function withSliceKeys(
  resolve: GraphQLFieldResolver<unknown, unknown>,
): GraphQLFieldResolver<unknown, unknown> {
  return (source, args, context, info) => {
    const slicePath = sliceKeyPath(info.fieldNodes[0]);
    if (slicePath !== undefined)
      return evaluateSliceKey(
        source,
        slicePath,
        info.parentType.name,
        (context as GraphQLContext).fhirpath,
      );
    return resolve(source, args, context, info);
  };
}

const trackingFieldResolver = withSliceKeys(containerTrackingResolver);
const plainFieldResolver = withSliceKeys(defaultFieldResolver);

function selectsField(document: DocumentNode, name: string): boolean {
  let found = false;
  visit(document, {
    Field(node) {
      if (node.name.value !== name) return undefined;
      found = true;
      return BREAK;
    },
  });
  return found;
}

/** An error found in both the rewritten query and the original is reported once. */
function distinct(errors: readonly GraphQLError[]): GraphQLError[] {
  const seen = new Set<string>();
  return errors.filter((error) => {
    const key = `${error.message}@${JSON.stringify(error.locations ?? [])}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

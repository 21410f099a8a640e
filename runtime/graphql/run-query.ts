/**
 * A FHIR GraphQL query from text to result, wherever it comes from (`$graphql` over HTTP, a
 * bot's `fhir.graphql`): its size checked before it is parsed, the query limits before it is
 * validated or kept, then run against the caller's data source within a FHIRPath budget.
 */
import { GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { FhirPathBudget } from './compile-fhirpath.js';
import { executeFhirQuery, type ExecutionEngine } from './fhir-query.js';
import type { FhirDataSource, GraphQLContext } from './graphql-context.js';
import { parseQuery, type PreparedRun } from './prepared-query-cache.js';
import { measureQuery, type QueryLimits } from './query-limits.js';

export interface QueryRequest {
  readonly query: string;
  readonly variables: Record<string, unknown>;
  readonly operationName?: string;
}

export type Checked =
  | { readonly errors: readonly GraphQLError[] }
  | { readonly document: DocumentNode; readonly run: PreparedRun; readonly errors?: undefined };

/**
 * The query parsed, within the limits and valid, or the errors that refuse it (a syntax error,
 * a limit, a validation error). `onCost` hears the estimated cost of each query measured.
 */
export function checkQuery(
  schema: GraphQLSchema,
  request: QueryRequest,
  limits: QueryLimits,
  onCost?: (cost: number) => void,
): Checked {
  let parsed;
  try {
    parsed = parseQuery(schema, request.query, limits);
  } catch (error) {
    if (error instanceof GraphQLError) return { errors: [error] };
    throw error;
  }
  const measured = measureQuery(
    parsed.document,
    request.operationName,
    { ...request.variables, ...parsed.variables },
    limits,
  );
  if (measured.cost !== undefined) onCost?.(measured.cost);
  // Limits first: a query too big to run is refused before it costs its validation, and is not
  // kept.
  if (measured.errors.length > 0) return { errors: parsed.relocate(measured.errors) };
  parsed.keep();
  const run = parsed.prepare();
  if (run.query.errors.length > 0) return { errors: run.relocate(run.query.errors) };
  return { document: run.query.document, run };
}

/** Runs a checked query; `onEngine` hears which engine ran it (compiled or interpreted). */
export async function runQuery(
  run: PreparedRun,
  schema: GraphQLSchema,
  rootValue: unknown,
  data: FhirDataSource,
  request: QueryRequest,
  limits: QueryLimits,
  onEngine?: (engine: ExecutionEngine) => void,
): Promise<ExecutionResult> {
  const contextValue: GraphQLContext = {
    data,
    fhirpath: new FhirPathBudget(limits.fhirpathBudgetMs),
  };
  const result = await executeFhirQuery(
    run.query,
    {
      schema,
      rootValue,
      contextValue,
      variableValues: { ...request.variables, ...run.variables },
      operationName: request.operationName,
    },
    onEngine,
  );
  return result.errors ? { ...result, errors: run.relocate(result.errors) } : result;
}

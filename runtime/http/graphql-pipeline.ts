/**
 * One GraphQL request through the query pipeline: parsed (or taken from the cache of prepared
 * queries), measured against the limits before anything else, validated, then executed against
 * the store with the caller's project and scopes. Queries that do not parse, validate or fit the
 * limits get 400 and no data; field errors come back beside the data with status 200; a field
 * that failed because the store is out of reach fails the request with 503.
 * @see http://hl7.org/fhir/R4/graphql.html
 */
import {
  GraphQLSchema,
  Kind,
  getOperationAST,
  getVariableValues,
  type DocumentNode,
} from 'graphql';
import type { Context } from 'koa';
import { answerIntrospection, isIntrospectionOnly } from '../graphql/introspection-cache.js';
import type { QueryLimits } from '../graphql/query-limits.js';
import { checkQuery, runQuery } from '../graphql/run-query.js';
import { createStoreDataSource } from '../graphql/store-data-source.js';
import { fhirError } from '../model/fhir-error.js';
import type { Metrics } from '../observability/metrics.js';
import type { SearchLimits } from '../rest/search-request.js';
import type { ResourceStore } from '../store/resource-store.js';
import { formatError, statusOf } from './graphql-errors.js';
import { readGraphQLRequest, respond, type GraphQLRequest } from './graphql-request.js';
import { sendKeptBody } from './kept-body.js';
import { accessOf, projectOf } from './require-token.js';

export interface GraphQLPipelineOptions {
  readonly store: ResourceStore;
  readonly searchLimits: SearchLimits;
  readonly queryLimits: QueryLimits;
  /** Observes each query's estimated cost, and which engine ran it. */
  readonly metrics?: Metrics;
}

/** Answers the request in `ctx` with `target`'s schema, `rootValue` at the root. */
export async function runGraphQL(
  ctx: Context,
  target: GraphQLSchema,
  rootValue: unknown,
  { store, searchLimits, queryLimits, metrics }: GraphQLPipelineOptions,
): Promise<void> {
  const request = readGraphQLRequest(ctx);
  const checked = checkQuery(target, request, queryLimits, (cost) =>
    metrics?.graphqlCost.observe(cost),
  );
  if (checked.errors) return respond(ctx, 400, { errors: checked.errors.map(formatError) });
  const { document, query } = checked;
  if (ctx.method === 'GET' && isMutation(document, request.operationName)) {
    throw fhirError(405, 'not-supported', 'Mutations need POST');
  }
  const data = createStoreDataSource(store, projectOf(ctx), accessOf(ctx), searchLimits);
  const execute = async () => {
    const result = await runQuery(query, target, rootValue, data, request, queryLimits, (engine) =>
      metrics?.graphqlExecutions.inc({ engine }),
    );
    const errors = result.errors?.map(formatError);
    // A field that failed because the store is out of reach fails the request: 503, retry later.
    const status = result.errors?.some((e) => statusOf(e) === 503)
      ? 503
      : errors && result.data === undefined
        ? 400
        : 200;
    // No data at all: the request failed before execution (its variables do not fit their
    // types, no operation has its name), which the contract answers as it does a query that
    // does not validate: no `data`.
    if (errors && result.data === undefined) return { status, body: { errors } };
    return { status, body: { ...(errors ? { errors } : {}), data: result.data ?? null } };
  };
  if (
    isIntrospectionOnly(document, request.operationName) &&
    variablesFit(target, document, request)
  ) {
    const answer = await answerIntrospection(
      target,
      query.executable,
      request.variables,
      request.operationName,
      async () => JSON.stringify((await execute()).body),
    );
    ctx.type = 'application/json';
    return sendKeptBody(ctx, answer);
  }
  const { status, body } = await execute();
  respond(ctx, status, body);
}

function isMutation(document: DocumentNode, operationName: string | undefined): boolean {
  return document.definitions.some(
    (d) =>
      d.kind === Kind.OPERATION_DEFINITION &&
      d.operation === 'mutation' &&
      (!operationName || d.name?.value === operationName),
  );
}

/**
 * Whether the request's variables fit the operation's definitions. Those that do not are
 * answered 400 by graphql-js's executor, never from the introspection cache.
 */
function variablesFit(
  schema: GraphQLSchema,
  document: DocumentNode,
  { variables, operationName }: GraphQLRequest,
): boolean {
  const operation = getOperationAST(document, operationName);
  if (!operation) return false;
  return !getVariableValues(schema, operation.variableDefinitions ?? [], variables).errors;
}

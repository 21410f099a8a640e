/**
 * One GraphQL request through the query pipeline: parsed (or taken from the cache of prepared
 * queries), measured against the limits before anything else, validated, then executed against
 * the store with the caller's project and scopes. Queries that do not parse, validate or fit the
 * limits get 400 and no data; field errors come back beside the data with status 200; a field
 * that failed because the store is out of reach fails the request with 503. Each error carries
 * its code (error-codes.ts); the answer is in the media type graphql-response.ts negotiated.
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
import { codeOfDocumentError } from '../graphql/error-codes.js';
import { answerIntrospection, isIntrospectionOnly } from '../graphql/introspection-cache.js';
import type { QueryLimits } from '../graphql/query-limits.js';
import { checkQuery, runQuery } from '../graphql/run-query.js';
import { createStoreDataSource } from '../graphql/store-data-source.js';
import { fhirError } from '../model/fhir-error.js';
import type { Metrics } from '../observability/metrics.js';
import type { SearchLimits } from '../rest/search-request.js';
import type { ResourceStore } from '../store/resource-store.js';
import { formatError, statusOf } from './graphql-errors.js';
import { readGraphQLRequest } from './graphql-request.js';
import { GRAPHQL_RESPONSE, mediaTypeOf, respond } from './graphql-response.js';
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
  if (checked.errors)
    return respond(ctx, 400, {
      errors: checked.errors.map((e) => formatError(e, codeOfDocumentError(e))),
    });
  const { document, run } = checked;
  if (ctx.method === 'GET' && isMutation(document, request.operationName)) {
    throw fhirError(405, 'not-supported', 'Mutations need POST');
  }
  const data = createStoreDataSource(store, projectOf(ctx), accessOf(ctx), searchLimits);
  const execute = async () => {
    const result = await runQuery(run, target, rootValue, data, request, queryLimits, (engine) =>
      metrics?.graphqlExecutions.inc({ engine }),
    );
    // No data at all: the request failed before execution began — no operation has its name,
    // or its variables do not fit their types —, which is answered as a query that does not
    // validate is: 400, no `data`.
    if (result.errors && result.data === undefined) {
      const code = getOperationAST(document, request.operationName)
        ? 'BAD_USER_INPUT'
        : 'OPERATION_RESOLUTION_FAILURE';
      return { status: 400, body: { errors: result.errors.map((e) => formatError(e, code)) } };
    }
    const errors = result.errors?.map((e) => formatError(e, 'BAD_USER_INPUT'));
    // A field that failed because the store is out of reach fails the request: 503, retry later.
    // application/graphql-response+json allows no `data` beside a status other than 2xx.
    if (result.errors?.some((e) => statusOf(e) === 503))
      return {
        status: 503,
        body:
          mediaTypeOf(ctx) === GRAPHQL_RESPONSE
            ? { errors }
            : { errors, data: result.data ?? null },
      };
    return { status: 200, body: { ...(errors ? { errors } : {}), data: result.data ?? null } };
  };
  const variables = { ...request.variables, ...run.variables };
  if (
    isIntrospectionOnly(document, request.operationName) &&
    variablesFit(target, run.query.executable, variables, request.operationName)
  ) {
    const answer = await answerIntrospection(
      target,
      run.query.executable,
      variables,
      request.operationName,
      async () => JSON.stringify((await execute()).body),
    );
    ctx.type = mediaTypeOf(ctx);
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
  variables: Record<string, unknown>,
  operationName: string | undefined,
): boolean {
  const operation = getOperationAST(document, operationName);
  if (!operation) return false;
  return !getVariableValues(schema, operation.variableDefinitions ?? [], variables).errors;
}

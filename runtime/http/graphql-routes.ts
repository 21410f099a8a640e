/**
 * FHIR GraphQL over HTTP: `POST|GET [base]/$graphql`, instance level
 * `[base]/{type}/{id}/$graphql` (the resource is the query's root), and the generated SDL at
 * `[base]/$graphql/schema.graphql`. Queries that do not parse, validate or fit the limits get
 * 400 and no data; field errors come back beside the data with status 200.
 * @see http://hl7.org/fhir/R4/graphql.html
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Router from '@koa/router';
import {
  GraphQLError,
  GraphQLObjectType,
  GraphQLSchema,
  Kind,
  getOperationAST,
  getVariableValues,
  type DocumentNode,
  type FormattedExecutionResult,
} from 'graphql';
import type { Context, Middleware } from 'koa';
import { searchableTypes } from '../../generated/search/index.js';
import type { SearchLimits } from '../rest/search-request.js';
import { generatedPath } from '../model/generated-json.js';
import { executeFhirQuery } from '../graphql/fhir-query.js';
import { answerIntrospection, isIntrospectionOnly } from '../graphql/introspection-cache.js';
import { parseCached, type ParsedQuery } from '../graphql/prepared-query-cache.js';
import { measureQuery, type QueryLimits } from '../graphql/query-limits.js';
import type { Metrics } from '../observability/metrics.js';
import { createStoreDataSource, graphqlError } from '../graphql/store-data-source.js';
import type { ResourceStore } from '../store/resource-store.js';
import { checkJsonNesting } from './fhir-body.js';
import { fhirError, type OperationOutcome } from '../model/fhir-error.js';
import { FHIR_BASE } from './rest-routes.js';
import { accessOf, projectOf } from './require-token.js';
import { authorize } from '../access/authorize.js';

export interface GraphQLRouteOptions {
  readonly schema: GraphQLSchema;
  readonly store: ResourceStore;
  readonly searchLimits: SearchLimits;
  readonly queryLimits: QueryLimits;
  /** Observes each query's estimated cost. */
  readonly metrics?: Metrics;
}

interface GraphQLRequest {
  readonly query: string;
  readonly variables: Record<string, unknown>;
  readonly operationName?: string;
}

export function graphqlRoutes({
  schema,
  store,
  searchLimits,
  queryLimits,
  metrics,
}: GraphQLRouteOptions): Router {
  const router = new Router({ prefix: FHIR_BASE, sensitive: true });
  router.use(graphqlRefusals());
  const instanceSchemas = new Map<string, GraphQLSchema>();
  const instanceSchema = (type: string) => {
    let built = instanceSchemas.get(type);
    if (!built) {
      const root = schema.getType(type) as GraphQLObjectType;
      built = new GraphQLSchema({
        query: root,
        types: Object.values(schema.getTypeMap()),
        directives: schema.getDirectives(),
      });
      instanceSchemas.set(type, built);
    }
    return built;
  };

  const run = async (ctx: Context, target: GraphQLSchema, rootValue: unknown) => {
    const request = readRequest(ctx);
    const parsed = parse(target, request.query);
    const { document } = parsed;
    const measured = measureQuery(document, request.operationName, request.variables, queryLimits);
    if (measured.cost !== undefined) metrics?.graphqlCost.observe(measured.cost);
    // Limits first: a query too big to run is refused before it costs its validation.
    if (measured.errors.length > 0)
      return respond(ctx, 400, { errors: measured.errors.map(formatError) });
    const query = parsed.prepared();
    if (query.errors.length > 0)
      return respond(ctx, 400, { errors: query.errors.map(formatError) });
    if (ctx.method === 'GET' && isMutation(document, request.operationName)) {
      throw fhirError(405, 'not-supported', 'Mutations need POST');
    }
    const data = createStoreDataSource(store, projectOf(ctx), accessOf(ctx), searchLimits);
    const execute = async () => {
      const result = await executeFhirQuery(
        query,
        {
          schema: target,
          rootValue,
          contextValue: { data },
          variableValues: request.variables,
          operationName: request.operationName,
        },
        (engine) => metrics?.graphqlExecutions.inc({ engine }),
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
      const text = await answerIntrospection(
        target,
        query.executable,
        request.variables,
        request.operationName,
        async () => JSON.stringify((await execute()).body),
      );
      ctx.status = 200;
      ctx.type = 'application/json';
      ctx.body = text;
      return;
    }
    const { status, body } = await execute();
    respond(ctx, status, body);
  };

  router.get('/$graphql/schema.graphql', (ctx) => {
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = generatedSdl();
  });
  router.get('/$graphql', (ctx) => run(ctx, schema, {}));
  router.post('/$graphql', (ctx) => run(ctx, schema, {}));
  const instance = async (ctx: Context) => {
    const type = ctx.params.type;
    if (!searchableTypes.has(type))
      throw fhirError(404, 'not-found', `${type} is not a resource type this server knows`);
    authorize(accessOf(ctx), type, 'r');
    const resource = await store.read(projectOf(ctx), type, ctx.params.id);
    await run(ctx, instanceSchema(type), resource);
  };
  router.get('/:type/:id/$graphql', instance);
  router.post('/:type/:id/$graphql', instance);
  return router;
}

/** GET: `query`, `variables` (JSON), `operationName`; POST: JSON, or a raw `application/graphql` body. */
function readRequest(ctx: Context): GraphQLRequest {
  if (ctx.method === 'GET') {
    const params = ctx.URL.searchParams;
    return request(params.get('query'), params.get('variables'), params.get('operationName'));
  }
  const body = (ctx.request as { body?: unknown }).body;
  if (ctx.is('application/graphql'))
    return request(typeof body === 'string' ? body : undefined, undefined, undefined);
  if (!ctx.is('application/json'))
    throw fhirError(
      415,
      'not-supported',
      'POST $graphql takes application/json or application/graphql',
    );
  const json = (body ?? {}) as Record<string, unknown>;
  return request(json.query, json.variables, json.operationName);
}

function request(query: unknown, variables: unknown, operationName: unknown): GraphQLRequest {
  if (typeof query !== 'string' || query.trim() === '')
    throw badRequest('The request has no query');
  let parsedVariables = variables;
  if (typeof variables === 'string') {
    try {
      parsedVariables = JSON.parse(variables);
    } catch {
      throw badRequest('variables is not valid JSON');
    }
    try {
      checkJsonNesting(parsedVariables, 'variables');
    } catch (error) {
      throw badRequest((error as Error).message);
    }
  }
  if (
    parsedVariables !== undefined &&
    parsedVariables !== null &&
    (typeof parsedVariables !== 'object' || Array.isArray(parsedVariables))
  ) {
    throw badRequest('variables must be a JSON object');
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string')
    throw badRequest('operationName must be a string');
  return {
    query,
    variables: (parsedVariables ?? {}) as Record<string, unknown>,
    ...(operationName ? { operationName } : {}),
  };
}

function parse(schema: GraphQLSchema, text: string): ParsedQuery {
  try {
    return parseCached(schema, text);
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    throw new RequestRefused(400, [formatError(error)]);
  }
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
 * An error thrown while executing, with its HTTP status and OperationOutcome in `extensions`
 * (which graphql-jit leaves undefined on the errors it makes itself).
 */
function knownError(error: GraphQLError): { known: GraphQLError; internal: boolean } {
  const internal = Boolean(
    error.originalError &&
    !(error.originalError instanceof GraphQLError) &&
    !('status' in (error.extensions ?? {})),
  );
  return { known: internal ? graphqlError(error.originalError) : error, internal };
}

function statusOf(error: GraphQLError): unknown {
  return knownError(error).known.extensions?.status;
}

/** A GraphQL error as the contract shapes it: with an OperationOutcome in `extensions.resource`. */
function formatError(error: GraphQLError): NonNullable<FormattedExecutionResult['errors']>[number] {
  const { known, internal } = knownError(error);
  const message =
    internal && (known.extensions?.status as number) >= 500 ? 'Internal error' : known.message;
  const resource: OperationOutcome = (known.extensions?.resource as
    OperationOutcome | undefined) ?? {
    resourceType: 'OperationOutcome',
    issue: [{ severity: 'error', code: 'invalid', diagnostics: message }],
  };
  return {
    message,
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
    extensions: { resource },
  };
}

class RequestRefused extends Error {
  constructor(
    readonly status: number,
    readonly errors: ReturnType<typeof formatError>[],
  ) {
    super(errors[0]?.message);
  }
}

function badRequest(message: string): RequestRefused {
  return new RequestRefused(400, [formatError(new GraphQLError(message))]);
}

/** Refusals before execution are GraphQL-shaped too: `{errors}` with status 400. */
function graphqlRefusals(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (!(error instanceof RequestRefused)) throw error;
      respond(ctx, error.status, { errors: error.errors });
    }
  };
}

function respond(ctx: Context, status: number, body: unknown): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = body;
}

let sdl: string | undefined;
/** The generated SDL files together: the whole schema, read on first request. */
function generatedSdl(): string {
  if (!sdl) {
    const folder = generatedPath('graphql');
    sdl = readdirSync(folder)
      .filter((f) => f.endsWith('.graphql'))
      .sort()
      .map((f) => readFileSync(join(folder, f), 'utf8'))
      .join('\n');
  }
  return sdl;
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

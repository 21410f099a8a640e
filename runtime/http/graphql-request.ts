/**
 * A GraphQL request read from HTTP: GET's `query`, `variables` (JSON) and `operationName`
 * parameters, or a POST body of JSON or raw `application/graphql`. What cannot be read is refused
 * GraphQL-shaped: `{errors}` with status 400 (graphql-response.ts answers it).
 * @see https://graphql.github.io/graphql-over-http/draft/
 */
import { GraphQLError } from 'graphql';
import type { Context } from 'koa';
import { fhirError } from '../model/fhir-error.js';
import { checkJsonNesting } from './fhir-body.js';
import { formatError, type FormattedError } from './graphql-errors.js';

export interface GraphQLRequest {
  readonly query: string;
  readonly variables: Record<string, unknown>;
  readonly operationName?: string;
}

/** GET: `query`, `variables` (JSON), `operationName`; POST: JSON, or a raw `application/graphql` body. */
export function readGraphQLRequest(ctx: Context): GraphQLRequest {
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

/** A request refused before it runs, with its GraphQL errors. */
export class RequestRefused extends Error {
  constructor(
    readonly status: number,
    readonly errors: FormattedError[],
  ) {
    super(errors[0]?.message);
  }
}

function badRequest(message: string): RequestRefused {
  return new RequestRefused(400, [formatError(new GraphQLError(message), 'BAD_REQUEST')]);
}

/**
 * `$graphql` requests. The arguments come in two orders: MedplumClient's
 * `(query, operationName?, variables?, options?)` and Graphir's earlier
 * `(query, variables?, operationName?)`. An object second argument is Graphir's order; a string,
 * `null` or `undefined` one is Medplum's, where the variables must then be an object.
 */
import type { OperationOutcome } from '../../generated/types/index.js';
import { errorOf, failure } from './graphir-error.js';
import type { FhirTransport, RequestOptions } from './fhir-transport.js';
import { parseJson } from './response-body.js';

export type GraphqlVariables = Record<string, unknown>;

export interface GraphqlError {
  message: string;
  locations?: { line: number; column: number }[];
  path?: (string | number)[];
  extensions?: { resource?: OperationOutcome; [key: string]: unknown };
}

export interface GraphqlResponse<T = unknown> {
  data?: T | null;
  errors?: GraphqlError[];
}

interface GraphqlRequest {
  query: string;
  operationName?: string;
  variables?: GraphqlVariables;
}

/** The request the arguments mean, in either order; arguments of the wrong kind throw. */
export function graphqlRequest(
  query: string,
  second: string | GraphqlVariables | null | undefined,
  third: string | GraphqlVariables | null | undefined,
): GraphqlRequest {
  if (typeof query !== 'string') throw new TypeError('graphql needs a query string');
  const graphirOrder = typeof second === 'object' && second !== null;
  const operationName = graphirOrder ? third : second;
  const variables = graphirOrder ? second : third;
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string')
    throw new TypeError('The GraphQL operation name must be a string');
  if (
    variables !== undefined &&
    variables !== null &&
    (typeof variables !== 'object' || Array.isArray(variables))
  )
    throw new TypeError(
      'GraphQL variables must be an object: graphql(query, operationName, variables), or graphql(query, variables, operationName)',
    );
  return {
    query,
    ...(typeof operationName === 'string' ? { operationName } : {}),
    ...(variables ? { variables } : {}),
  };
}

/**
 * GraphQL errors (a query that does not validate, a field that fails) are returned in `errors`,
 * as the server answers them; other failures throw a GraphirError.
 */
export async function postGraphql<T>(
  transport: FhirTransport,
  request: GraphqlRequest,
  options: RequestOptions | undefined,
): Promise<GraphqlResponse<T>> {
  const response = await transport.send(
    `${transport.fhirBaseUrl}/$graphql`,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(request),
    },
    options,
  );
  if (response.status !== 200 && response.status !== 400) throw await errorOf(response);
  const text = await response.text();
  const json = parseJson(text);
  if (isGraphqlBody(json)) return json as GraphqlResponse<T>;
  throw failure(response.status, json, text);
}

function isGraphqlBody(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return 'data' in value || Array.isArray((value as { errors?: unknown }).errors);
}

/**
 * The `extensions.code` of every GraphQL error, so that a client can branch on what went wrong
 * without reading messages. Apollo Server's names where it has one; the others name an HTTP
 * status as Apollo would. Errors with a FHIR status take their code from it here, and nowhere
 * else; errors graphql-js raises itself take theirs from the stage at which they arose.
 * @see https://www.apollographql.com/docs/apollo-server/data/errors#built-in-error-codes
 */
import type { GraphQLError } from 'graphql';
import type { IssueCode } from '../model/fhir-error.js';

export type GraphQLErrorCode =
  /** The document is not GraphQL. */
  | 'GRAPHQL_PARSE_FAILED'
  /** The document does not validate against the schema. */
  | 'GRAPHQL_VALIDATION_FAILED'
  /** No operation has the name asked for, or several and none was named. */
  | 'OPERATION_RESOLUTION_FAILURE'
  /** The HTTP request is not a GraphQL request this server reads (body, method, media types). */
  | 'BAD_REQUEST'
  /** Values the caller gave: variables, search and argument values, a resource to write. */
  | 'BAD_USER_INPUT'
  /** Past a limit of depth, cost, searches, size or FHIRPath time. */
  | 'QUERY_TOO_COMPLEX'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  /** A write that conflicts with the stored version (a version mismatch, a duplicate). */
  | 'CONFLICT'
  | 'TOO_MANY_REQUESTS'
  /** The database is out of reach: the same request may succeed later. */
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_SERVER_ERROR';

/**
 * Where a FHIR error was raised: reading the HTTP request (a 400 there is a malformed request),
 * or running the operation (a 400 there is a value the caller gave).
 */
export type ErrorStage = 'request' | 'execution';

/** The code of an error with a FHIR status and issue code. */
export function codeOfStatus(
  status: number,
  issue: IssueCode | undefined,
  stage: ErrorStage,
): GraphQLErrorCode {
  switch (status) {
    case 400:
      if (issue === 'too-costly') return 'QUERY_TOO_COMPLEX';
      return stage === 'request' ? 'BAD_REQUEST' : 'BAD_USER_INPUT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'FORBIDDEN';
    case 404:
    case 410:
      return 'NOT_FOUND';
    case 409:
    case 412:
      return 'CONFLICT';
    case 413:
      return 'QUERY_TOO_COMPLEX';
    case 422:
      return 'BAD_USER_INPUT';
    case 429:
      return 'TOO_MANY_REQUESTS';
    case 503:
      return 'SERVICE_UNAVAILABLE';
  }
  return status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST';
}

/**
 * The marker the limits put on their refusals (query-limits.ts, prepared-query-cache.ts,
 * compile-fhirpath.ts, fhir-query.ts), which clients see as QUERY_TOO_COMPLEX.
 */
const QUERY_LIMIT = 'QUERY_LIMIT';

/** The code an error already carries: a limit's marker, or one set from a FHIR status. */
export function codeOf(error: GraphQLError): GraphQLErrorCode | undefined {
  const code = error.extensions?.code;
  if (code === QUERY_LIMIT) return 'QUERY_TOO_COMPLEX';
  return typeof code === 'string' ? (code as GraphQLErrorCode) : undefined;
}

/**
 * The code of an error that refused the document before it ran, when it carries none: one the
 * parser raised points at a place in the text (no syntax node), one validation raised names the
 * nodes it refuses.
 */
export function codeOfDocumentError(error: GraphQLError): GraphQLErrorCode {
  return codeOf(error) ?? (error.nodes ? 'GRAPHQL_VALIDATION_FAILED' : 'GRAPHQL_PARSE_FAILED');
}

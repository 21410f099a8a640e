/**
 * GraphQL errors as the contract shapes them: each with its code in `extensions.code` and its
 * OperationOutcome in `extensions.resource`; internal errors say nothing of their cause.
 */
import { GraphQLError, type FormattedExecutionResult } from 'graphql';
import { codeOf, codeOfStatus, type GraphQLErrorCode } from '../graphql/error-codes.js';
import { graphqlError } from '../graphql/store-data-source.js';
import type { FhirError, OperationOutcome } from '../model/fhir-error.js';

export type FormattedError = NonNullable<FormattedExecutionResult['errors']>[number];

/**
 * An error thrown while executing, with its HTTP status, code and OperationOutcome in
 * `extensions` (which graphql-jit leaves undefined on the errors it makes itself).
 */
function knownError(error: GraphQLError): { known: GraphQLError; internal: boolean } {
  const internal = Boolean(
    error.originalError &&
    !(error.originalError instanceof GraphQLError) &&
    !('status' in (error.extensions ?? {})),
  );
  return { known: internal ? graphqlError(error.originalError) : error, internal };
}

export function statusOf(error: GraphQLError): unknown {
  return knownError(error).known.extensions?.status;
}

/**
 * A GraphQL error as the contract shapes it. `fallback` is its code when it carries none: what
 * the stage that raised it (parsing, validation, choosing the operation, a resolver) says.
 */
export function formatError(error: GraphQLError, fallback: GraphQLErrorCode): FormattedError {
  const { known, internal } = knownError(error);
  const message =
    internal && (known.extensions?.status as number) >= 500 ? 'Internal error' : known.message;
  const code = codeOf(known) ?? fallback;
  const resource: OperationOutcome = (known.extensions?.resource as
    OperationOutcome | undefined) ?? {
    resourceType: 'OperationOutcome',
    issue: [
      {
        severity: 'error',
        code: code === 'QUERY_TOO_COMPLEX' ? 'too-costly' : 'invalid',
        diagnostics: message,
      },
    ],
  };
  return {
    message,
    ...(error.locations ? { locations: error.locations } : {}),
    ...(error.path ? { path: error.path } : {}),
    extensions: { code, resource },
  };
}

/** A FHIR error that refused the HTTP request before its operation ran, as a GraphQL error. */
export function refusalError(error: FhirError): FormattedError {
  return {
    message: error.issues.map((i) => i.diagnostics).join('; '),
    extensions: {
      code: codeOfStatus(error.status, error.issues[0]?.code, 'request'),
      resource: error.outcome,
    },
  };
}

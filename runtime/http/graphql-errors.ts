/**
 * GraphQL errors as the contract shapes them: each with its OperationOutcome in
 * `extensions.resource`; internal errors say nothing of their cause.
 */
import { GraphQLError, type FormattedExecutionResult } from 'graphql';
import { graphqlError } from '../graphql/store-data-source.js';
import type { OperationOutcome } from '../model/fhir-error.js';

export type FormattedError = NonNullable<FormattedExecutionResult['errors']>[number];

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

export function statusOf(error: GraphQLError): unknown {
  return knownError(error).known.extensions?.status;
}

/** A GraphQL error as the contract shapes it: with an OperationOutcome in `extensions.resource`. */
export function formatError(error: GraphQLError): FormattedError {
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

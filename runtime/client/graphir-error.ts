/**
 * The error every failed request throws. MedplumClient throws an `OperationOutcomeError` whose
 * `outcome` is always an OperationOutcome and whose message joins its issues; GraphirError does
 * the same, so code written for Medplum that reads `error.outcome` works, and adds the status.
 */
import type { OperationOutcome, OperationOutcomeIssue } from '../../generated/types/index.js';
import { parseJson } from './response-body.js';

export class GraphirError extends Error {
  readonly status: number;
  /** The server's OperationOutcome, or one made from the message when the body was none. */
  readonly outcome: OperationOutcome;

  constructor(status: number, message: string, outcome?: OperationOutcome) {
    super(message);
    this.name = 'GraphirError';
    this.status = status;
    this.outcome = outcome ?? {
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'error', code: 'processing', diagnostics: message }],
    };
  }
}

/** The error of a response that is not ok; the response body is consumed. */
export async function errorOf(response: Response): Promise<GraphirError> {
  const text = await response.text().catch(() => '');
  return failure(response.status, parseJson(text), text || response.statusText);
}

/** An error from a status and a body already read, as JSON if it was JSON. */
export function failure(status: number, json: unknown, text: string): GraphirError {
  if (isOutcome(json)) return new GraphirError(status, outcomeMessage(json), json);
  const graphqlError = firstGraphqlError(json);
  if (graphqlError) {
    const { message, outcome } = graphqlError;
    return new GraphirError(status, message, isOutcome(outcome) ? outcome : undefined);
  }
  return new GraphirError(status, `HTTP ${status}: ${text.slice(0, 200)}`);
}

/** Medplum's message for an outcome: each issue's text and diagnostics, joined. */
function outcomeMessage(outcome: OperationOutcome): string {
  const issues = (outcome.issue ?? []).map(issueMessage);
  return issues.length > 0 ? issues.join('; ') : 'Unknown error';
}

function issueMessage(issue: OperationOutcomeIssue): string {
  const text = issue.details?.text;
  let message = text
    ? issue.diagnostics
      ? `${text} (${issue.diagnostics})`
      : text
    : (issue.diagnostics ?? 'Unknown error');
  if (issue.expression?.length) message += ` (${issue.expression.join(', ')})`;
  return message;
}

/**
 * `$graphql` refuses some requests with a GraphQL body (`{errors}`) rather than an outcome; its
 * errors carry the OperationOutcome in `extensions.resource`.
 */
function firstGraphqlError(json: unknown): { message: string; outcome: unknown } | undefined {
  const errors = (json as { errors?: unknown } | null | undefined)?.errors;
  if (!Array.isArray(errors)) return undefined;
  const first = errors[0] as { message?: unknown; extensions?: { resource?: unknown } } | null;
  if (typeof first?.message !== 'string') return undefined;
  return { message: first.message, outcome: first.extensions?.resource };
}

function isOutcome(value: unknown): value is OperationOutcome {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { resourceType?: unknown }).resourceType === 'OperationOutcome'
  );
}

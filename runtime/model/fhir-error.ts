/**
 * Errors that become an OperationOutcome with a status. Every layer throws these (or its own
 * subclasses of them); the HTTP edge (runtime/http/error-middleware.ts) and GraphQL's field errors
 * turn them into responses. Anything else is an internal error whose message is never shown to
 * the client.
 * @see http://hl7.org/fhir/R4/operationoutcome.html
 * @see http://hl7.org/fhir/R4/http.html#summary (the statuses)
 */

/** http://hl7.org/fhir/R4/valueset-issue-type.html (the codes used here). */
export type IssueCode =
  | 'invalid'
  | 'structure'
  | 'required'
  | 'value'
  | 'not-found'
  | 'deleted'
  | 'conflict'
  | 'duplicate'
  | 'not-supported'
  | 'too-costly'
  | 'throttled'
  | 'security'
  | 'login'
  | 'forbidden'
  | 'processing'
  | 'timeout'
  | 'transient'
  | 'exception'
  | 'informational';

export interface Issue {
  readonly severity: 'fatal' | 'error' | 'warning' | 'information';
  readonly code: IssueCode;
  readonly diagnostics: string;
  readonly expression?: readonly string[];
}

export interface OperationOutcome {
  readonly resourceType: 'OperationOutcome';
  readonly issue: readonly Issue[];
}

export class FhirError extends Error {
  /** `message`: for logs and tests; clients see the issues. By default their diagnostics. */
  constructor(
    readonly status: number,
    readonly issues: readonly Issue[],
    readonly headers: Readonly<Record<string, string>> = {},
    message = issues.map((i) => i.diagnostics).join('; '),
  ) {
    super(message);
    this.name = new.target.name;
  }

  get outcome(): OperationOutcome {
    return { resourceType: 'OperationOutcome', issue: this.issues };
  }
}

/** One error issue with a status: `fhirError(404, 'not-found', 'Patient/x is not known')`. */
export function fhirError(
  status: number,
  code: IssueCode,
  diagnostics: string,
  expression?: string,
): FhirError {
  return new FhirError(status, [
    { severity: 'error', code, diagnostics, ...(expression ? { expression: [expression] } : {}) },
  ]);
}

export function informational(diagnostics: string): OperationOutcome {
  return {
    resourceType: 'OperationOutcome',
    issue: [{ severity: 'information', code: 'informational', diagnostics }],
  };
}

/** What `thrown` means to a client: a FhirError as it is; anything else a 500 that says nothing. */
export function toFhirError(thrown: unknown): FhirError {
  return thrown instanceof FhirError
    ? thrown
    : fhirError(500, 'exception', 'Internal server error');
}

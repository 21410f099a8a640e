/**
 * Errors that become an OperationOutcome with an HTTP status. Code throws these; one middleware
 * (error-middleware.ts) turns them into responses. Anything else is an internal error whose
 * message is never shown to the client.
 * @see http://hl7.org/fhir/R4/operationoutcome.html
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
  constructor(
    readonly status: number,
    readonly issues: readonly Issue[],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(issues.map((i) => i.diagnostics).join('; '));
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

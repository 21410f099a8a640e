/**
 * Issues reported by the resource validator, shaped so that they map one-to-one onto
 * OperationOutcome.issue (severity, code, expression, diagnostics).
 */
import { FhirError } from '../model/fhir-error.js';

/** A subset of the FHIR issue-type value set (http://hl7.org/fhir/R4/valueset-issue-type.html). */
export type ValidationIssueCode = 'structure' | 'required' | 'value' | 'invalid';

export interface ValidationIssue {
  severity: 'error';
  code: ValidationIssueCode;
  /** FHIRPath-like location of the problem: `Patient.name[1].given[0]`, `Patient._birthDate`. */
  expression: string;
  /** A sentence an API user can act on. */
  diagnostics: string;
}

/** Thrown by parseResource when a value is not a valid resource: 400, an issue per problem. */
export class ResourceValidationError extends FhirError {
  constructor(issues: readonly ValidationIssue[]) {
    super(
      400,
      issues.map(({ expression, ...issue }) => ({ ...issue, expression: [expression] })),
      {},
      summarize(issues),
    );
  }
}

function summarize(issues: readonly ValidationIssue[]): string {
  if (issues.length === 0) return 'Invalid resource';
  const rest = issues.length - 1;
  const more = rest === 0 ? '' : ` (and ${rest} more issue${rest === 1 ? '' : 's'})`;
  return `Invalid resource: ${issues[0].diagnostics}${more}`;
}

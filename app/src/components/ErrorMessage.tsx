/** A failure as the user reads it: the server's diagnostics, one per issue. */
import { FhirRequestError } from '../lib/fhir-client.js';

export function ErrorMessage({ error }: { readonly error: Error }) {
  const issues =
    error instanceof FhirRequestError && error.outcome
      ? error.outcome.issue.filter((issue) => issue.severity !== 'information')
      : [];
  return (
    <div className="error" role="alert">
      {issues.length > 1 ? (
        <ul>
          {issues.map((issue, index) => (
            <li key={index}>{issue.diagnostics ?? issue.details?.text ?? issue.code}</li>
          ))}
        </ul>
      ) : (
        <p>{error.message}</p>
      )}
    </div>
  );
}

/** A bot's answer by its type: text, JSON, a resource, an OperationOutcome, HL7 v2 by segment. */
import type { BotAnswer } from '../lib/bot-execution.js';
import { resourceHref } from '../lib/route.js';
import { Link } from './Link.js';

export function BotAnswerView({ answer }: { readonly answer: BotAnswer }) {
  switch (answer.kind) {
    case 'text':
      return (
        <pre className="answer" tabIndex={0} aria-label="Answer (text)">
          {answer.text}
        </pre>
      );
    case 'json':
      return (
        <pre className="answer json" tabIndex={0} aria-label="Answer (JSON)">
          {JSON.stringify(answer.value, null, 2)}
        </pre>
      );
    case 'resource': {
      const { resource } = answer;
      return (
        <>
          <p>
            A {resource.resourceType}
            {resource.id && (
              <>
                {': '}
                <Link href={resourceHref(resource.resourceType, resource.id)}>
                  {resource.resourceType}/{resource.id}
                </Link>
              </>
            )}
          </p>
          <pre className="answer json" tabIndex={0} aria-label="Answer (FHIR resource)">
            {JSON.stringify(resource, null, 2)}
          </pre>
        </>
      );
    }
    case 'outcome':
      return (
        <ul className="outcome">
          {answer.outcome.issue.map((issue, index) => (
            <li key={index} className={`issue-${issue.severity}`}>
              <strong>{issue.severity}</strong> ({issue.code}):{' '}
              {issue.severity === 'information' && issue.diagnostics?.includes('\n') ? (
                <pre className="stack">{issue.diagnostics}</pre>
              ) : (
                (issue.diagnostics ?? issue.details?.text)
              )}
            </li>
          ))}
        </ul>
      );
    case 'hl7':
      return (
        <table className="hl7" aria-label="Answer (HL7 v2 segments)">
          <thead>
            <tr>
              <th scope="col">Segment</th>
              <th scope="col">Fields</th>
            </tr>
          </thead>
          <tbody>
            {answer.segments.map(([name, ...fields], index) => (
              <tr key={index}>
                <th scope="row">{name}</th>
                <td>
                  {fields.map((field, at) => (
                    <span key={at}>
                      {at > 0 && <span className="hl7-separator">|</span>}
                      <span
                        className="hl7-field"
                        title={`${name}-${name === 'MSH' ? at + 2 : at + 1}`}
                      >
                        {field}
                      </span>
                    </span>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      );
  }
}

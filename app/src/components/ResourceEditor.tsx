/**
 * Create or edit a resource as JSON. What the server refuses comes back as an OperationOutcome;
 * each issue is listed, and the line of the element it names (its expression or location) is
 * marked in the editor, a button away.
 */
import { useRef, useState } from 'react';
import { useApp } from '../lib/app-context.js';
import { FhirRequestError } from '../lib/fhir-client.js';
import type { Resource } from '../lib/fhir-types.js';
import { issuePaths, lineOfPath, type OutcomeIssue } from '../lib/outcome.js';
import { hrefOf, resourceHref } from '../lib/route.js';
import { useFetched } from '../lib/use-fetched.js';
import type { LineMark } from './CodeEditor.js';
import { Editor } from './Editor.js';
import { ErrorMessage } from './ErrorMessage.js';
import { Link } from './Link.js';
import { Loading } from './Loading.js';

export interface ResourceEditorProps {
  readonly type: string;
  /** Absent: a new resource. */
  readonly id?: string;
}

export function ResourceEditor({ type, id }: ResourceEditorProps) {
  const { client } = useApp();
  const [fetched] = useFetched(
    async (): Promise<Resource> =>
      id === undefined
        ? { resourceType: type }
        : (await client.json<Resource>(`${encodeURIComponent(type)}/${encodeURIComponent(id)}`))
            .body,
    [client, type, id],
  );
  return (
    <>
      <h1>{id === undefined ? `New ${type}` : `Edit ${type}/${id}`}</h1>
      <Loading fetched={fetched} what={id === undefined ? type : `${type}/${id}`}>
        {(resource) => <JsonForm type={type} id={id} resource={resource} />}
      </Loading>
    </>
  );
}

/** An issue and the line it points at in the text that was sent. */
interface PlacedIssue {
  readonly issue: OutcomeIssue;
  readonly line: number | undefined;
}

function JsonForm({
  type,
  id,
  resource,
}: {
  readonly type: string;
  readonly id: string | undefined;
  readonly resource: Resource;
}) {
  const { client, navigate } = useApp();
  const initial = JSON.stringify(resource, null, 2);
  const text = useRef(initial);
  const goToLine = useRef<(line: number) => void>(() => undefined);
  const [issues, setIssues] = useState<readonly PlacedIssue[]>([]);
  const [error, setError] = useState<Error | undefined>();
  const [saving, setSaving] = useState(false);

  const save = async () => {
    setError(undefined);
    setIssues([]);
    const sent = text.current;
    let body: unknown;
    try {
      body = JSON.parse(sent);
    } catch (caught) {
      setError(new Error(`The text is not JSON: ${(caught as Error).message}`));
      return;
    }
    setSaving(true);
    try {
      const version = resource.meta?.versionId;
      const { body: saved } = await client.json<Resource>(
        id === undefined
          ? encodeURIComponent(type)
          : `${encodeURIComponent(type)}/${encodeURIComponent(id)}`,
        {
          method: id === undefined ? 'POST' : 'PUT',
          body,
          // A version saved meanwhile by someone else is not overwritten: 412 instead.
          headers: id !== undefined && version ? { 'If-Match': `W/"${version}"` } : {},
        },
      );
      navigate(resourceHref(saved.resourceType, saved.id ?? id ?? ''));
    } catch (caught) {
      setSaving(false);
      if (caught instanceof FhirRequestError && caught.outcome) {
        setIssues(
          caught.outcome.issue.map((issue) => ({
            issue,
            line: issuePaths(issue)
              .map((path) => lineOfPath(sent, path))
              .find((line) => line !== undefined),
          })),
        );
      } else setError(caught as Error);
    }
  };

  const marks: LineMark[] = issues
    .filter((placed): placed is PlacedIssue & { line: number } => placed.line !== undefined)
    .map(({ issue, line }) => ({ line, message: issue.diagnostics ?? issue.code }));

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <p className="editor-label">{type} as JSON</p>
      <Editor
        initial={initial}
        language="json"
        label={`${type} as JSON`}
        onChange={(value) => (text.current = value)}
        marks={marks}
        onReady={(go) => (goToLine.current = go)}
      />
      {error && <ErrorMessage error={error} />}
      {issues.length > 0 && (
        <div className="error" role="alert">
          <p>The server did not save it:</p>
          <ul className="issues">
            {issues.map(({ issue, line }, index) => (
              <li key={index}>
                {issue.diagnostics ?? issue.code}
                {issuePaths(issue).length > 0 && (
                  <>
                    {' '}
                    <code>{issuePaths(issue).join(', ')}</code>
                  </>
                )}
                {line !== undefined && (
                  <>
                    {' '}
                    <button
                      type="button"
                      className="link-button"
                      onClick={() => goToLine.current(line)}
                    >
                      Go to line {line}
                    </button>
                  </>
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
      <div className="form-actions">
        <button type="submit" className="primary" disabled={saving}>
          {saving ? 'Saving…' : 'Save'}
        </button>
        <Link
          href={
            id === undefined ? hrefOf({ page: 'list', type, query: '' }) : resourceHref(type, id)
          }
        >
          Cancel
        </Link>
      </div>
    </form>
  );
}

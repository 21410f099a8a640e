/**
 * Runs the bot from the page: by id or by one of its identifiers, POST with an input of one of
 * the five content types or GET with parameters; shows the status, the answer by its type, and
 * the console output, read from the execution's AuditEvent by its trace id.
 */
import { useState } from 'react';
import { useApp } from '../lib/app-context.js';
import {
  BOT_CONTENT_TYPES,
  executeBot,
  executionByTraceId,
  type BotContentType,
  type ExecutionRecord,
  type ExecutionResult,
} from '../lib/bot-execution.js';
import type { Resource } from '../lib/fhir-types.js';
import { can } from '../lib/permissions.js';
import { BotAnswerView } from './BotAnswerView.js';
import type { EditorLanguage } from './CodeEditor.js';
import { Editor } from './Editor.js';
import { ErrorMessage } from './ErrorMessage.js';

const EXAMPLES: Record<BotContentType, string> = {
  'text/plain': 'Hello',
  'application/json': '{\n  "name": "Ada"\n}',
  'application/x-www-form-urlencoded': 'name=Ada&city=London',
  'application/fhir+json':
    '{\n  "resourceType": "Patient",\n  "name": [{ "given": ["Ada"], "family": "Lovelace" }]\n}',
  'x-application/hl7-v2+er7':
    'MSH|^~\\&|LAB|ACME|EHR|HOSP|20260101120000||ADT^A01|MSG0001|P|2.5\nPID|1||12345^^^HOSP^MR||Doe^Jane',
};

const LANGUAGES: Record<BotContentType, EditorLanguage> = {
  'text/plain': 'text',
  'application/json': 'json',
  'application/x-www-form-urlencoded': 'text',
  'application/fhir+json': 'json',
  'x-application/hl7-v2+er7': 'text',
};

interface Identifier {
  readonly system?: string;
  readonly value?: string;
}

export interface BotExecutePanelProps {
  readonly bot: Resource;
  /** Called after each execution, so that the list of executions can be read again. */
  readonly onExecuted: () => void;
}

interface Run {
  readonly result: ExecutionResult;
  readonly elapsedMs: number;
  readonly record: ExecutionRecord | undefined | 'unreadable';
}

export function BotExecutePanel({ bot, onExecuted }: BotExecutePanelProps) {
  const { client, session } = useApp();
  const identifiers = ((bot.identifier as Identifier[] | undefined) ?? [])
    .filter((identifier) => identifier.value)
    .map((identifier) => `${identifier.system ?? ''}|${identifier.value}`);
  const [by, setBy] = useState<'id' | 'identifier'>('id');
  const [identifier, setIdentifier] = useState(identifiers[0] ?? '');
  const [method, setMethod] = useState<'POST' | 'GET'>('POST');
  const [contentType, setContentType] = useState<BotContentType>('application/json');
  const [input, setInput] = useState(EXAMPLES['application/json']);
  /** Counts the times the page replaced the input, which gives the editor the new text. */
  const [inputReplaced, setInputReplaced] = useState(0);
  const [parameters, setParameters] = useState('name=Ada');
  const [running, setRunning] = useState(false);
  const [run, setRun] = useState<Run | undefined>();
  const [error, setError] = useState<Error | undefined>();
  const readsAudit = can(session, 'search', 'AuditEvent');

  const execute = async () => {
    setRunning(true);
    setError(undefined);
    setRun(undefined);
    const started = performance.now();
    try {
      const result = await executeBot(client, {
        target: by === 'id' ? { kind: 'id', id: bot.id ?? '' } : { kind: 'identifier', identifier },
        method,
        contentType,
        input,
        parameters,
      });
      const elapsedMs = Math.round(performance.now() - started);
      setRun({ result, elapsedMs, record: undefined });
      onExecuted();
      if (readsAudit && result.traceId) {
        const record = await executionByTraceId(client, bot.id ?? '', result.traceId).catch(
          () => 'unreadable' as const,
        );
        setRun({ result, elapsedMs, record });
      }
    } catch (caught) {
      setError(caught as Error);
    } finally {
      setRunning(false);
    }
  };

  return (
    <section className="panel" aria-labelledby="execute-heading">
      <h2 id="execute-heading">Execute</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void execute();
        }}
      >
        <div className="form-grid">
          <fieldset>
            <legend>Run by</legend>
            <label className="check">
              <input
                type="radio"
                name="by"
                value="id"
                checked={by === 'id'}
                onChange={() => setBy('id')}
              />
              Id <code>Bot/{bot.id}/$execute</code>
            </label>
            <label className="check">
              <input
                type="radio"
                name="by"
                value="identifier"
                checked={by === 'identifier'}
                disabled={identifiers.length === 0}
                onChange={() => setBy('identifier')}
              />
              Identifier
            </label>
            {identifiers.length > 0 && (
              <>
                <label htmlFor="execute-identifier" className="visually-hidden">
                  Identifier to run the bot by
                </label>
                <select
                  id="execute-identifier"
                  value={identifier}
                  disabled={by !== 'identifier'}
                  onChange={(event) => setIdentifier(event.currentTarget.value)}
                >
                  {identifiers.map((text) => (
                    <option key={text} value={text}>
                      {text}
                    </option>
                  ))}
                </select>
              </>
            )}
          </fieldset>
          <fieldset>
            <legend>Method</legend>
            <label className="check">
              <input
                type="radio"
                name="method"
                value="POST"
                checked={method === 'POST'}
                onChange={() => setMethod('POST')}
              />
              POST an input
            </label>
            <label className="check">
              <input
                type="radio"
                name="method"
                value="GET"
                checked={method === 'GET'}
                onChange={() => setMethod('GET')}
              />
              GET with parameters
            </label>
          </fieldset>
        </div>
        {method === 'POST' ? (
          <>
            <label htmlFor="execute-content-type">Content type</label>
            <select
              id="execute-content-type"
              value={contentType}
              onChange={(event) => {
                const next = event.currentTarget.value as BotContentType;
                // An input left as the example becomes the new type's example.
                if (input === EXAMPLES[contentType] || input.trim() === '') {
                  setInput(EXAMPLES[next]);
                  setInputReplaced((n) => n + 1);
                }
                setContentType(next);
              }}
            >
              {BOT_CONTENT_TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
            <p className="editor-label">Input</p>
            <Editor
              key={inputReplaced}
              id="execute-input"
              initial={input}
              language={LANGUAGES[contentType]}
              label="Input"
              onChange={setInput}
            />
          </>
        ) : (
          <>
            <label htmlFor="execute-parameters">Parameters</label>
            <input
              id="execute-parameters"
              spellCheck={false}
              placeholder="name=Ada&city=London"
              value={parameters}
              onChange={(event) => setParameters(event.currentTarget.value)}
            />
          </>
        )}
        <div className="form-actions">
          <button type="submit" className="primary" disabled={running}>
            {running ? 'Running…' : 'Execute'}
          </button>
        </div>
      </form>
      {error && <ErrorMessage error={error} />}
      {run && <RunResult run={run} readsAudit={readsAudit} />}
    </section>
  );
}

function RunResult({ run, readsAudit }: { readonly run: Run; readonly readsAudit: boolean }) {
  const { result, elapsedMs, record } = run;
  const ok = result.status >= 200 && result.status < 300;
  return (
    <div className="run-result" aria-live="polite">
      <h3>Result</h3>
      <p className={ok ? 'status-ok' : 'status-failed'} id="execute-status">
        <strong>{result.status}</strong> {ok ? 'OK' : 'failed'} · {result.contentType || 'no body'}{' '}
        · {elapsedMs} ms
        {result.traceId && (
          <>
            {' '}
            · trace id <code>{result.traceId}</code>
          </>
        )}
      </p>
      <h4>Answer</h4>
      <BotAnswerView answer={result.answer} />
      <h4>Console</h4>
      {!readsAudit ? (
        <p>
          The console output is kept in the execution’s AuditEvent, which this token cannot read.
        </p>
      ) : record === undefined ? (
        <p role="status">Reading the execution’s AuditEvent…</p>
      ) : record === 'unreadable' ? (
        <p>The execution’s AuditEvent could not be read.</p>
      ) : (
        <pre className="console" tabIndex={0} aria-label="Console output">
          {record.console ?? '(nothing logged)'}
        </pre>
      )}
    </div>
  );
}

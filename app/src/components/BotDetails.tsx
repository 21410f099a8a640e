/**
 * A Bot's details: what callers need to run it (its id, to copy, and its identifiers), its time
 * limit and access, its code in an editor (saved with a PUT when the token may write Bots, which
 * needs admin rights), the Execute panel and its recent executions.
 */
import { useRef, useState } from 'react';
import { useApp } from '../lib/app-context.js';
import type { Resource } from '../lib/fhir-types.js';
import { can, canExecuteBots } from '../lib/permissions.js';
import { hrefOf } from '../lib/route.js';
import { useFetched } from '../lib/use-fetched.js';
import { BotExecutePanel } from './BotExecutePanel.js';
import { BotExecutions } from './BotExecutions.js';
import { Editor } from './Editor.js';
import { CopyButton } from './CopyButton.js';
import { ErrorMessage } from './ErrorMessage.js';
import { Link } from './Link.js';
import { Loading } from './Loading.js';
import { When } from './When.js';

/** A Bot without `scope` runs with these (docs/bots.md, Access). */
const DEFAULT_SCOPE = 'system/*.cruds system/Bot.$execute';

interface Identifier {
  readonly system?: string;
  readonly value?: string;
}

export function BotDetails({ id }: { readonly id: string }) {
  const { client } = useApp();
  const [fetched, reload] = useFetched(
    async () => (await client.json<Resource>(`Bot/${encodeURIComponent(id)}`)).body,
    [client, id],
  );
  return (
    <Loading fetched={fetched} what={`Bot/${id}`}>
      {(bot) => <BotPage bot={bot} onSaved={reload} />}
    </Loading>
  );
}

function BotPage({ bot, onSaved }: { readonly bot: Resource; readonly onSaved: () => void }) {
  const { session } = useApp();
  const id = bot.id ?? '';
  const [executions, setExecutions] = useState(0);
  const identifiers = (bot.identifier as Identifier[] | undefined) ?? [];
  return (
    <>
      <div className="page-heading">
        <h1>
          {typeof bot.name === 'string' ? bot.name : 'Bot'}
          <span className="subtitle">Bot</span>
        </h1>
        <div className="actions">
          <Link
            className="button"
            href={hrefOf({ page: 'resource', type: 'Bot', id, tab: 'history' })}
          >
            History
          </Link>
          <Link
            className="button"
            href={hrefOf({ page: 'resource', type: 'Bot', id, tab: 'json' })}
          >
            JSON
          </Link>
        </div>
      </div>
      <dl className="facts">
        <div>
          <dt>Id</dt>
          <dd>
            <code id="bot-id">{id}</code> <CopyButton text={id} label="Copy id" />
          </dd>
        </div>
        <div>
          <dt>Identifiers</dt>
          <dd>
            {identifiers.length === 0 ? (
              'none'
            ) : (
              <ul className="plain">
                {identifiers.map((identifier, index) => (
                  <li key={index}>
                    <code>
                      {identifier.system ?? ''}|{identifier.value ?? ''}
                    </code>
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </div>
        <div>
          <dt>Timeout</dt>
          <dd>{typeof bot.timeout === 'number' ? `${bot.timeout} s` : 'the server’s default'}</dd>
        </div>
        <div>
          <dt>Scope</dt>
          <dd>
            <code>{typeof bot.scope === 'string' ? bot.scope : DEFAULT_SCOPE}</code>
            {typeof bot.scope !== 'string' && ' (default)'}
          </dd>
        </div>
        <div>
          <dt>Runs as its caller</dt>
          <dd>
            {bot.runAsUser === true
              ? 'yes: within the caller’s access too'
              : 'no: with its own access only'}
          </dd>
        </div>
        <div>
          <dt>Last update</dt>
          <dd>
            <When instant={bot.meta?.lastUpdated} /> (version {bot.meta?.versionId})
          </dd>
        </div>
      </dl>
      <BotCode
        key={bot.meta?.versionId}
        bot={bot}
        writable={can(session, 'update', 'Bot')}
        onSaved={onSaved}
      />
      {canExecuteBots(session) ? (
        <BotExecutePanel bot={bot} onExecuted={() => setExecutions((n) => n + 1)} />
      ) : (
        <p className="hint">
          This token may not run bots (it needs {'system/Bot.$execute'} or admin rights).
        </p>
      )}
      {can(session, 'search', 'AuditEvent') && <BotExecutions botId={id} generation={executions} />}
    </>
  );
}

function BotCode({
  bot,
  writable,
  onSaved,
}: {
  readonly bot: Resource;
  readonly writable: boolean;
  readonly onSaved: () => void;
}) {
  const { client } = useApp();
  const initial = typeof bot.code === 'string' ? bot.code : '';
  const code = useRef(initial);
  const [error, setError] = useState<Error | undefined>();
  const [saving, setSaving] = useState(false);
  const save = async () => {
    setSaving(true);
    setError(undefined);
    try {
      await client.json(`Bot/${encodeURIComponent(bot.id ?? '')}`, {
        method: 'PUT',
        body: { ...bot, code: code.current },
        headers: bot.meta?.versionId ? { 'If-Match': `W/"${bot.meta.versionId}"` } : {},
      });
      onSaved();
    } catch (caught) {
      setError(caught as Error);
      setSaving(false);
    }
  };
  return (
    <section className="panel" aria-labelledby="code-heading">
      <h2 id="code-heading">Code</h2>
      {!writable && (
        <p className="hint">Changing a bot’s code needs the project’s admin rights: read only.</p>
      )}
      <Editor
        initial={initial}
        language="typescript"
        label="Bot code"
        readOnly={!writable}
        onChange={(text) => (code.current = text)}
      />
      {error && <ErrorMessage error={error} />}
      {writable && (
        <div className="form-actions">
          <button type="button" className="primary" disabled={saving} onClick={() => void save()}>
            {saving ? 'Saving…' : 'Save code'}
          </button>
        </div>
      )}
    </section>
  );
}

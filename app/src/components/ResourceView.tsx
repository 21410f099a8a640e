/**
 * One resource: its elements, its JSON, its history with what each version changed, and what it
 * refers to and what refers to it; Edit and Delete when the token allows them.
 */
import { useApp } from '../lib/app-context.js';
import type { Resource } from '../lib/fhir-types.js';
import { displayName } from '../lib/fhir-types.js';
import { can } from '../lib/permissions.js';
import { hrefOf, TABS, type Tab } from '../lib/route.js';
import { useFetched } from '../lib/use-fetched.js';
import { DeleteButton } from './DeleteButton.js';
import { ElementsView } from './ElementsView.js';
import { HistoryView } from './HistoryView.js';
import { Link } from './Link.js';
import { Loading } from './Loading.js';
import { ReferencesView } from './ReferencesView.js';
import { When } from './When.js';

const TAB_NAMES: Record<Tab, string> = {
  details: 'Details',
  json: 'JSON',
  history: 'History',
  references: 'References',
};

export interface ResourceViewProps {
  readonly type: string;
  readonly id: string;
  readonly tab: Tab;
}

export function ResourceView({ type, id, tab }: ResourceViewProps) {
  const { client, session } = useApp();
  const path = `${encodeURIComponent(type)}/${encodeURIComponent(id)}`;
  const [fetched] = useFetched(
    async () => (await client.json<Resource>(path)).body,
    [client, path],
  );
  return (
    <Loading fetched={fetched} what={`${type}/${id}`}>
      {(resource) => (
        <>
          <div className="page-heading">
            <h1>
              {type}/{id}
              {displayName(resource) && <span className="subtitle">{displayName(resource)}</span>}
            </h1>
            <div className="actions">
              {type === 'Bot' && (
                <Link className="button" href={hrefOf({ page: 'bot', id })}>
                  Bot details
                </Link>
              )}
              {can(session, 'update', type) && (
                <Link className="button" href={hrefOf({ page: 'edit', type, id })}>
                  Edit
                </Link>
              )}
              {can(session, 'delete', type) && <DeleteButton type={type} id={id} />}
            </div>
          </div>
          <p className="meta">
            Version {resource.meta?.versionId ?? '?'}, last updated{' '}
            <When instant={resource.meta?.lastUpdated} />
          </p>
          <nav className="tabs" aria-label={`Views of ${type}/${id}`}>
            <ul>
              {TABS.map((name) => (
                <li key={name}>
                  <Link
                    href={hrefOf({ page: 'resource', type, id, tab: name })}
                    current={name === tab}
                  >
                    {TAB_NAMES[name]}
                  </Link>
                </li>
              ))}
            </ul>
          </nav>
          <section aria-label={TAB_NAMES[tab]} className="tab-panel">
            {tab === 'details' && <ElementsView resource={resource} />}
            {tab === 'json' && (
              <pre className="json" tabIndex={0} aria-label="Resource JSON">
                {JSON.stringify(resource, null, 2)}
              </pre>
            )}
            {tab === 'history' && <HistoryView type={type} id={id} />}
            {tab === 'references' && <ReferencesView resource={resource} />}
          </section>
        </>
      )}
    </Loading>
  );
}

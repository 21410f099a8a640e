/**
 * Resources of one type, most recently updated first, a page at a time (the Bundle's next and
 * previous links), narrowed by a search box that takes the type's search parameters as a query
 * string (`name=smith&birthdate=ge1980`), which the server checks.
 */
import { useEffect, useState } from 'react';
import { useApp } from '../lib/app-context.js';
import type { Bundle, Resource } from '../lib/fhir-types.js';
import { displayName } from '../lib/fhir-types.js';
import { can } from '../lib/permissions.js';
import { hrefOf, resourceHref } from '../lib/route.js';
import { resourceTypes } from '../lib/searches.js';
import { useFetched } from '../lib/use-fetched.js';
import { Link } from './Link.js';
import { Loading } from './Loading.js';
import { When } from './When.js';

const PAGE_SIZE = 20;

export interface ResourceListProps {
  readonly type: string;
  readonly query: string;
}

export function ResourceList({ type, query }: ResourceListProps) {
  const { client, session, navigate } = useApp();
  const [draft, setDraft] = useState(query);
  /** A page the server linked to; undefined: the first. */
  const [pageUrl, setPageUrl] = useState<string | undefined>();
  useEffect(() => {
    setDraft(query);
    setPageUrl(undefined);
  }, [query]);

  const [page] = useFetched(
    async () => (await client.json<Bundle>(pageUrl ?? firstPage(type, query))).body,
    [client, type, query, pageUrl],
  );
  const [params] = useFetched(
    async () => (await resourceTypes(client)).get(type)?.searchParams ?? [],
    [client, type],
  );

  return (
    <>
      <div className="page-heading">
        <h1>{type}</h1>
        {can(session, 'create', type) && (
          <Link className="button" href={hrefOf({ page: 'new', type })}>
            New {type}
          </Link>
        )}
      </div>
      <form
        className="search"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          navigate(hrefOf({ page: 'list', type, query: draft.trim() }));
        }}
      >
        <label htmlFor="search-query">Search {type}</label>
        <div className="search-row">
          <input
            id="search-query"
            type="search"
            spellCheck={false}
            placeholder="name=smith&birthdate=ge1980"
            aria-describedby="search-help"
            value={draft}
            onChange={(event) => setDraft(event.currentTarget.value)}
          />
          <button type="submit">Search</button>
        </div>
        <details id="search-help" className="hint">
          <summary>Search parameters of {type}</summary>
          {params.state === 'loaded' ? (
            <p>
              {params.value.map((name) => (
                <code key={name}>{name}</code>
              ))}
            </p>
          ) : (
            <p>Loading…</p>
          )}
        </details>
      </form>
      <Loading fetched={page} what={`${type} resources`}>
        {(bundle) => <ResultPage bundle={bundle} onPage={setPageUrl} />}
      </Loading>
    </>
  );
}

/** Newest first unless the query sorts itself. */
function firstPage(type: string, query: string): string {
  const params = new URLSearchParams(query);
  if (!params.has('_sort')) params.set('_sort', '-_lastUpdated');
  if (!params.has('_count')) params.set('_count', String(PAGE_SIZE));
  return `${encodeURIComponent(type)}?${params}`;
}

function ResultPage({
  bundle,
  onPage,
}: {
  readonly bundle: Bundle;
  readonly onPage: (url: string) => void;
}) {
  const resources = (bundle.entry ?? [])
    .filter((entry) => entry.search?.mode !== 'include')
    .map((entry) => entry.resource)
    .filter((resource): resource is Resource => resource !== undefined);
  const link = (relation: string) => bundle.link?.find((l) => l.relation === relation)?.url;
  const previous = link('previous') ?? link('prev');
  const next = link('next');
  return (
    <section aria-label="Results">
      <p role="status" className="count">
        {bundle.total === undefined ? `${resources.length} shown` : `${bundle.total} found`}
      </p>
      {resources.length > 0 && (
        <table className="results">
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Name</th>
              <th scope="col">Last updated</th>
            </tr>
          </thead>
          <tbody>
            {resources.map((resource) => (
              <tr key={`${resource.resourceType}/${resource.id}`}>
                <td>
                  <Link href={resourceHref(resource.resourceType, resource.id ?? '')}>
                    {resource.id}
                  </Link>
                </td>
                <td>{displayName(resource) ?? ''}</td>
                <td>
                  <When instant={resource.meta?.lastUpdated} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav className="pager" aria-label="Pages">
        <button type="button" disabled={!previous} onClick={() => previous && onPage(previous)}>
          Previous page
        </button>
        <button type="button" disabled={!next} onClick={() => next && onPage(next)}>
          Next page
        </button>
      </nav>
    </section>
  );
}

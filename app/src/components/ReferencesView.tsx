/**
 * What a resource refers to (its Reference elements), and what refers to it: for each search
 * parameter of another type that may point at this type, a count search by this resource's
 * reference, all in one batch; those that match are links to the search.
 */
import { useApp } from '../lib/app-context.js';
import type { Resource } from '../lib/fhir-types.js';
import { can } from '../lib/permissions.js';
import { referenceHref, referencesIn } from '../lib/references.js';
import { hrefOf } from '../lib/route.js';
import { countAll } from '../lib/searches.js';
import { useFetched } from '../lib/use-fetched.js';
import { Link } from './Link.js';
import { Loading } from './Loading.js';

interface ReverseSearch {
  readonly type: string;
  readonly query: string;
  readonly count: number;
}

export function ReferencesView({ resource }: { readonly resource: Resource }) {
  const outgoing = referencesIn(resource);
  return (
    <>
      <h2>Refers to</h2>
      {outgoing.length === 0 ? (
        <p>No references.</p>
      ) : (
        <ul className="references">
          {outgoing.map(({ path, reference, display }) => {
            const href = referenceHref(reference);
            return (
              <li key={`${path}-${reference}`}>
                <code>{path}</code>:{' '}
                {href ? <Link href={href}>{reference}</Link> : <span>{reference}</span>}
                {display && ` (${display})`}
              </li>
            );
          })}
        </ul>
      )}
      <h2>Referred to by</h2>
      <ReverseReferences type={resource.resourceType} id={resource.id ?? ''} />
    </>
  );
}

function ReverseReferences({ type, id }: { readonly type: string; readonly id: string }) {
  const { client, session } = useApp();
  const [fetched] = useFetched(async (): Promise<ReverseSearch[]> => {
    const { default: byTarget } = await import('graphir:reverse-references');
    const searches = Object.entries(byTarget[type] ?? {})
      .filter(([source]) => can(session, 'search', source))
      .flatMap(([source, params]) =>
        params.map((param) => ({
          type: source,
          query: `${param}=${encodeURIComponent(`${type}/${id}`)}`,
        })),
      );
    const counts = await countAll(
      client,
      searches.map((search) => `${search.type}?${search.query}`),
    );
    return searches
      .map((search, index) => ({ ...search, count: counts[index] ?? 0 }))
      .filter((search) => search.count > 0);
  }, [client, session, type, id]);
  return (
    <Loading fetched={fetched} what="reverse references">
      {(found) =>
        found.length === 0 ? (
          <p>Nothing refers to it.</p>
        ) : (
          <ul className="references">
            {found.map(({ type: source, query, count }) => (
              <li key={`${source}?${query}`}>
                <Link
                  href={hrefOf({ page: 'list', type: source, query: decodeURIComponent(query) })}
                >
                  {source}?{decodeURIComponent(query)}
                </Link>{' '}
                ({count})
              </li>
            ))}
          </ul>
        )
      }
    </Loading>
  );
}

/**
 * The project's resource types with how many resources of each it holds: the types from the
 * CapabilityStatement, the counts from one batch of count searches for the types the token may
 * search. Empty types are hidden unless asked for.
 */
import { useMemo, useState } from 'react';
import { useApp } from '../lib/app-context.js';
import { can } from '../lib/permissions.js';
import { hrefOf } from '../lib/route.js';
import { countAll, resourceTypes } from '../lib/searches.js';
import { useFetched } from '../lib/use-fetched.js';
import { Link } from './Link.js';
import { Loading } from './Loading.js';

interface TypeCount {
  readonly type: string;
  readonly count: number | undefined;
}

export function ResourceTypeList() {
  const { client, session } = useApp();
  const [filter, setFilter] = useState('');
  const [showEmpty, setShowEmpty] = useState(false);
  const [fetched] = useFetched(async (): Promise<TypeCount[]> => {
    const types = [...(await resourceTypes(client)).keys()].filter((type) =>
      can(session, 'search', type),
    );
    const counts = await countAll(client, types);
    return types.map((type, index) => ({ type, count: counts[index] }));
  }, [client, session]);

  return (
    <>
      <h1>Resources</h1>
      <div className="toolbar">
        <label htmlFor="type-filter">Filter types</label>
        <input
          id="type-filter"
          type="search"
          value={filter}
          placeholder="e.g. Obs"
          onChange={(event) => setFilter(event.currentTarget.value)}
        />
        <label className="check">
          <input
            type="checkbox"
            checked={showEmpty}
            onChange={(event) => setShowEmpty(event.currentTarget.checked)}
          />
          Show empty types
        </label>
      </div>
      <Loading fetched={fetched} what="resource types">
        {(counts) => <TypeTable counts={counts} filter={filter} showEmpty={showEmpty} />}
      </Loading>
    </>
  );
}

function TypeTable({
  counts,
  filter,
  showEmpty,
}: {
  readonly counts: readonly TypeCount[];
  readonly filter: string;
  readonly showEmpty: boolean;
}) {
  const shown = useMemo(
    () =>
      counts.filter(
        ({ type, count }) =>
          type.toLowerCase().includes(filter.trim().toLowerCase()) &&
          (showEmpty || filter.trim() !== '' || (count ?? 0) > 0),
      ),
    [counts, filter, showEmpty],
  );
  if (shown.length === 0)
    return (
      <p>
        {filter
          ? 'No type matches the filter.'
          : 'No resources yet: tick “Show empty types” to create some.'}
      </p>
    );
  return (
    <table className="types">
      <caption className="visually-hidden">Resource types and their counts</caption>
      <thead>
        <tr>
          <th scope="col">Type</th>
          <th scope="col" className="number">
            Resources
          </th>
        </tr>
      </thead>
      <tbody>
        {shown.map(({ type, count }) => (
          <tr key={type}>
            <td>
              <Link href={hrefOf({ page: 'list', type, query: '' })}>{type}</Link>
            </td>
            <td className="number">{count ?? '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

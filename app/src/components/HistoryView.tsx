/** A resource's versions, newest first, each with what it changed from the version before. */
import { useApp } from '../lib/app-context.js';
import type { Bundle, BundleEntry } from '../lib/fhir-types.js';
import { useFetched } from '../lib/use-fetched.js';
import { changesBetween, type Change } from '../lib/version-diff.js';
import { Loading } from './Loading.js';
import { When } from './When.js';

export function HistoryView({ type, id }: { readonly type: string; readonly id: string }) {
  const { client } = useApp();
  const path = `${encodeURIComponent(type)}/${encodeURIComponent(id)}/_history?_count=100`;
  const [fetched] = useFetched(async () => (await client.json<Bundle>(path)).body, [client, path]);
  return (
    <Loading fetched={fetched} what="history">
      {(bundle) => <Versions entries={bundle.entry ?? []} />}
    </Loading>
  );
}

function Versions({ entries }: { readonly entries: readonly BundleEntry[] }) {
  return (
    <ol className="versions">
      {entries.map((entry, index) => {
        const resource = entry.resource;
        const older = entries[index + 1]?.resource;
        const versionId = resource?.meta?.versionId ?? versionFromUrl(entry);
        return (
          <li key={`${versionId}-${index}`} className="version">
            <h2>
              Version {versionId}
              <span className="subtitle">
                {entry.request?.method === 'DELETE' || !resource ? 'deleted' : ''}{' '}
                <When instant={resource?.meta?.lastUpdated} />
              </span>
            </h2>
            {resource && older ? (
              <ChangeList changes={changesBetween(older, resource)} />
            ) : resource ? (
              <p>The first version.</p>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}

function ChangeList({ changes }: { readonly changes: readonly Change[] }) {
  if (changes.length === 0) return <p>No element changed.</p>;
  return (
    <table className="diff">
      <thead>
        <tr>
          <th scope="col">Element</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((change, index) => (
          <tr key={index} className={`diff-${change.kind}`}>
            <th scope="row">
              <code>{change.path}</code> <span className="diff-kind">{change.kind}</span>
            </th>
            <td>
              <Value value={change.before} />
            </td>
            <td>
              <Value value={change.after} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Value({ value }: { readonly value: unknown }) {
  if (value === undefined) return null;
  return <code className="value">{typeof value === 'string' ? value : JSON.stringify(value)}</code>;
}

function versionFromUrl(entry: BundleEntry): string {
  return /_history\/([^/?]+)/.exec(entry.request?.url ?? entry.fullUrl ?? '')?.[1] ?? '?';
}

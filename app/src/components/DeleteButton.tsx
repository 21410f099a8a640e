/** Delete, asked twice: the first press offers the confirmation beside a way back. */
import { useState } from 'react';
import { useApp } from '../lib/app-context.js';
import { hrefOf } from '../lib/route.js';
import { ErrorMessage } from './ErrorMessage.js';

export function DeleteButton({ type, id }: { readonly type: string; readonly id: string }) {
  const { client, navigate } = useApp();
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  if (!asking)
    return (
      <button type="button" className="danger" onClick={() => setAsking(true)}>
        Delete
      </button>
    );
  const remove = async () => {
    try {
      await client.json(`${encodeURIComponent(type)}/${encodeURIComponent(id)}`, {
        method: 'DELETE',
      });
      navigate(hrefOf({ page: 'list', type, query: '' }));
    } catch (caught) {
      setError(caught as Error);
    }
  };
  return (
    <div className="confirm" role="group" aria-label="Confirm deletion">
      <span>
        Delete {type}/{id}?
      </span>
      <button type="button" className="danger" autoFocus onClick={() => void remove()}>
        Yes, delete
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
      {error && <ErrorMessage error={error} />}
    </div>
  );
}

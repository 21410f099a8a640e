/** What a part of a page shows while its data is on the way, or when it could not be had. */
import type { ReactNode } from 'react';
import type { Fetched } from '../lib/use-fetched.js';
import { ErrorMessage } from './ErrorMessage.js';

export interface LoadingProps<T> {
  readonly fetched: Fetched<T>;
  readonly what: string;
  readonly children: (value: T) => ReactNode;
}

export function Loading<T>({ fetched, what, children }: LoadingProps<T>) {
  if (fetched.state === 'loading')
    return (
      <p className="loading" role="status">
        Loading {what}…
      </p>
    );
  if (fetched.state === 'failed') return <ErrorMessage error={fetched.error} />;
  return <>{children(fetched.value)}</>;
}

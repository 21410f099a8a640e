/** A value loaded when a page opens or its inputs change, with its error; `reload` loads again. */
import { useCallback, useEffect, useState, type DependencyList } from 'react';

export type Fetched<T> =
  | { readonly state: 'loading' }
  | { readonly state: 'failed'; readonly error: Error }
  | { readonly state: 'loaded'; readonly value: T };

export function useFetched<T>(
  load: () => Promise<T>,
  deps: DependencyList,
): [Fetched<T>, () => void] {
  const [fetched, setFetched] = useState<Fetched<T>>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setFetched({ state: 'loading' });
    load().then(
      (value) => current && setFetched({ state: 'loaded', value }),
      (error: Error) => current && setFetched({ state: 'failed', error }),
    );
    // An answer to an outdated request is dropped: the page has moved on.
    return () => {
      current = false;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return [fetched, reload];
}

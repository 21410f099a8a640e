/**
 * Medplum's `QueryTypes` (a query string, URLSearchParams, a record, or `string[][]`) as the
 * name/value pairs sent to the host, read as MedplumClient reads them (`new URLSearchParams(q)`,
 * a record's undefined values left out, other values as `String(value)`), without the
 * URLSearchParams global, which the isolate may not have.
 */
export type QueryPairs = [string, string][];

export function queryPairs(query: unknown): QueryPairs {
  if (query === undefined || query === null) return [];
  if (typeof query === 'string') return parseQueryString(query);
  if (Array.isArray(query)) return query.map((pair) => [String(pair[0]), String(pair[1])]);
  if (typeof query === 'object') {
    const iterable = query as { entries?: () => Iterable<[unknown, unknown]> };
    // A URLSearchParams (or anything like one): its own pairs, repeated names too.
    if (typeof iterable.entries === 'function' && !isPlainObject(query))
      return Array.from(iterable.entries(), ([name, value]) => [String(name), String(value)]);
    return Object.entries(query)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => [name, String(value)]);
  }
  return parseQueryString(String(query));
}

/** `a=1&b=x+y` (a leading `?` ignored) as URLSearchParams parses it. */
export function parseQueryString(text: string): QueryPairs {
  const pairs: QueryPairs = [];
  for (const part of text.replace(/^\?/, '').split('&')) {
    if (part === '') continue;
    const at = part.indexOf('=');
    const name = at < 0 ? part : part.slice(0, at);
    const value = at < 0 ? '' : part.slice(at + 1);
    pairs.push([decode(name), decode(value)]);
  }
  return pairs;
}

/** The pairs with `name` set to `value` (as `URLSearchParams.set`, which Medplum calls). */
export function withPair(pairs: QueryPairs, name: string, value: string): QueryPairs {
  const kept = pairs.filter(([n]) => n !== name);
  return [...kept, [name, value]];
}

export function hasPair(pairs: QueryPairs, name: string): boolean {
  return pairs.some(([n]) => n === name);
}

function decode(text: string): string {
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

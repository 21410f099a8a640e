/**
 * Search queries in every form MedplumClient takes (a string, `URLSearchParams`, `[name, value]`
 * pairs, a record) and one more: a record value may be an array, sent as the parameter repeated
 * (values ANDed, as FHIR reads repeated parameters).
 */
type QueryValue = string | number | boolean;

export type SearchQuery =
  | string
  | URLSearchParams
  | string[][]
  | Record<string, QueryValue | readonly QueryValue[] | undefined>;

/** A fresh `URLSearchParams` of the query; record entries whose value is `undefined` are left out. */
export function toSearchParams(query: SearchQuery | undefined | null): URLSearchParams {
  if (query === undefined || query === null) return new URLSearchParams();
  if (typeof query === 'string') return new URLSearchParams(query);
  if (query instanceof URLSearchParams) return new URLSearchParams(query);
  // URLSearchParams itself refuses a pair that is not [name, value].
  if (Array.isArray(query)) return new URLSearchParams(query as [string, string][]);
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(name, String(item));
  }
  return params;
}

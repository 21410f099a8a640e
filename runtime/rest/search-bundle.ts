/**
 * A search result as a `searchset` Bundle with `total` and paging links.
 * @see http://hl7.org/fhir/R4/bundle.html#searchset
 */
import type { FhirResource } from '../model/fhir-resource.js';
import type { SearchResult } from '../store/search-store.js';

export interface SearchPage {
  /** The request URL, absolute. */
  readonly url: URL;
  readonly count: number;
  readonly offset: number;
  readonly elements?: readonly string[];
}

/** Elements every resource keeps under `_elements`. @see http://hl7.org/fhir/R4/search.html#elements */
const MANDATORY_ELEMENTS = ['resourceType', 'id', 'meta'];

export function searchBundle(base: string, result: SearchResult, page: SearchPage): FhirResource {
  const entry = [
    ...result.matches.map((r) => ({ r, mode: 'match' })),
    ...result.included.map((r) => ({ r, mode: 'include' })),
  ].map(({ r, mode }) => ({
    fullUrl: `${base}/${r.resourceType}/${r.id}`,
    resource: page.elements ? subset(r, page.elements) : r,
    search: { mode },
  }));
  return {
    resourceType: 'Bundle',
    type: 'searchset',
    ...(result.total === undefined ? {} : { total: result.total }),
    link: links(page, result),
    ...(entry.length ? { entry } : {}),
  };
}

function links(page: SearchPage, result: SearchResult): { relation: string; url: string }[] {
  const at = (offset: number) => {
    const url = new URL(page.url);
    url.searchParams.set('_offset', String(offset));
    url.searchParams.set('_count', String(page.count));
    return url.toString();
  };
  const links = [
    { relation: 'self', url: page.url.toString() },
    { relation: 'first', url: at(0) },
  ];
  if (page.offset > 0)
    links.push({ relation: 'previous', url: at(Math.max(0, page.offset - page.count)) });
  const more =
    result.total === undefined
      ? result.matches.length === page.count
      : page.offset + page.count < result.total;
  if (more && page.count > 0) links.push({ relation: 'next', url: at(page.offset + page.count) });
  if (result.total !== undefined && page.count > 0) {
    links.push({
      relation: 'last',
      url: at(Math.max(0, Math.floor((result.total - 1) / page.count) * page.count)),
    });
  }
  return links;
}

/** `_elements`: the listed top-level elements, the mandatory ones, and a SUBSETTED tag. */
function subset(resource: FhirResource, elements: readonly string[]): FhirResource {
  const kept = Object.fromEntries(
    Object.entries(resource).filter(
      ([name]) => MANDATORY_ELEMENTS.includes(name) || elements.includes(name.replace(/^_/, '')),
    ),
  );
  const meta = (resource.meta ?? {}) as { tag?: unknown[] };
  const tag = [
    ...(meta.tag ?? []),
    { system: 'http://terminology.hl7.org/CodeSystem/v3-ObservationValue', code: 'SUBSETTED' },
  ];
  return { ...kept, meta: { ...meta, tag } } as unknown as FhirResource;
}

/**
 * The `fhir` client's searches and URLs (a part of the client: fhir-core.ts), with Medplum's
 * query forms (fhir-query.ts) and return shapes: a Bundle, the first resource or undefined, a
 * ResourceArray carrying its `.bundle`, pages of them.
 */
import type { FhirCore, Methods } from './fhir-core.js';
import { hasPair, queryPairs, withPair, type QueryPairs } from './fhir-query.js';

interface Bundle {
  readonly entry?: readonly { readonly resource?: unknown }[];
  readonly link?: readonly { readonly relation?: string; readonly url?: string }[];
}

export function searchMethods(core: FhirCore): Methods {
  const { ErrorType, baseUrl, call, local, request, checked } = core;
  const fhirBase = () => `${baseUrl}fhir/R4/`;
  const search = (method: string, type: unknown, pairs: QueryPairs) =>
    call<Bundle>(method, 'search', [type, pairs]);
  const newUrl = (method: string, text: string): unknown => {
    const UrlType = (globalThis as { URL?: new (url: string) => unknown }).URL;
    if (typeof UrlType !== 'function') throw new ErrorType(`fhir.${method} needs the global URL`);
    return new UrlType(text);
  };
  const encodedQuery = (method: string, pairs: QueryPairs): string => {
    const Params = (globalThis as { URLSearchParams?: new (pairs: QueryPairs) => object })
      .URLSearchParams;
    if (typeof Params !== 'function')
      throw new ErrorType(`fhir.${method} needs the global URLSearchParams`);
    return String(new Params(pairs));
  };

  return {
    fhirUrl: (...path: string[]) => newUrl('fhirUrl', fhirBase() + path.join('/')),
    fhirSearchUrl: (type: string, query?: unknown) => {
      const pairs = queryPairs(query);
      const search = pairs.length ? `?${encodedQuery('fhirSearchUrl', pairs)}` : '';
      return newUrl('fhirSearchUrl', `${fhirBase()}${type}${search}`);
    },
    readCanonical: (type: unknown, url: unknown) =>
      local('readCanonical', async () => {
        const types = Array.isArray(type) ? type : [type];
        const found = await search('readCanonical', types.length === 1 ? types[0] : '', [
          ...(types.length === 1 ? [] : [['_type', types.join(',')] as [string, string]]),
          ['url', String(url)],
          ['_count', '1'],
        ]);
        return found.entry?.[0]?.resource;
      }),
    search: (type: unknown, query?: unknown) => search('search', type, queryPairs(query)),
    searchOne: (type: unknown, query?: unknown) =>
      local('searchOne', async () => {
        const found = await search('searchOne', type, withPair(queryPairs(query), '_count', '1'));
        return found.entry?.[0]?.resource;
      }),
    searchResources: (type: unknown, query?: unknown) =>
      local('searchResources', async () =>
        resourceArray(await search('searchResources', type, queryPairs(query))),
      ),
    searchResourcePages: async function* (type: unknown, query?: unknown) {
      let pairs = queryPairs(query);
      if (!hasPair(pairs, '_count')) pairs = withPair(pairs, '_count', '1000');
      let page = await search('searchResourcePages', type, pairs);
      for (;;) {
        const next = page.link?.find((link) => link.relation === 'next')?.url;
        if (!page.entry?.length && !next) return;
        yield resourceArray(page);
        if (!next) return;
        page = (await request('searchResourcePages', 'GET', next)) as Bundle;
      }
    },
    upsertResource: (resource: unknown, query: unknown) =>
      call('upsertResource', 'upsertResource', [checked(resource), queryPairs(query)]),
  };
}

/** Medplum's ResourceArray: the entries' resources, with the Bundle as `bundle`. */
function resourceArray(bundle: Bundle): unknown[] {
  return Object.assign(
    (bundle.entry ?? []).map((entry) => entry.resource),
    { bundle },
  );
}

/**
 * The `fhir` client's other calls (a part of the client: fhir-core.ts): history and versions,
 * batches, GraphQL, other bots, requests to paths under the base URL, and MedplumClient's cache
 * methods, which have nothing to do here.
 */
import type { FhirCore, Methods } from './fhir-core.js';

export function requestMethods({ baseUrl, call, request, bodyArgs }: FhirCore): Methods {
  return {
    getBaseUrl: () => baseUrl,
    readHistory: (type: unknown, id: unknown) => call('readHistory', 'readHistory', [type, id]),
    readVersion: (type: unknown, id: unknown, vid: unknown) =>
      call('readVersion', 'readVersion', [type, id, vid]),
    executeBatch: (bundle: unknown) => call('executeBatch', 'executeBatch', [bundle]),
    // Medplum's order, (query, operationName, variables); Graphir's client also takes
    // (query, variables, operationName), told apart by an object second argument.
    graphql: (query: unknown, second?: unknown, third?: unknown) => {
      const graphirOrder = typeof second === 'object' && second !== null;
      const [operationName, variables] = graphirOrder ? [third, second] : [second, third];
      return call('graphql', 'graphql', [query, operationName ?? null, variables ?? null]);
    },
    executeBot: (idOrIdentifier: unknown, body: unknown, contentType?: unknown) =>
      call('executeBot', 'executeBot', [idOrIdentifier, ...bodyArgs(body, contentType)]),

    get: (url: unknown) => request('get', 'GET', url),
    post: (url: unknown, body?: unknown, contentType?: unknown) =>
      request('post', 'POST', url, body, contentType),
    put: (url: unknown, body?: unknown, contentType?: unknown) =>
      request('put', 'PUT', url, body, contentType),
    patch: (url: unknown, operations?: unknown) =>
      request('patch', 'PATCH', url, operations, 'application/json-patch+json'),
    delete: (url: unknown) => request('delete', 'DELETE', url),

    // Medplum caches reads; this client does not, so there is never anything to forget or find.
    invalidateUrl: () => undefined,
    invalidateAll: () => undefined,
    invalidateSearches: () => undefined,
    clear: () => undefined,
    getCached: () => undefined,
    getCachedReference: () => undefined,
    isLoading: () => false,
    getInitPromise: () => Promise.resolve(),
  };
}

/**
 * The `fhir` client a bot gets, inside the isolate: MedplumClient's FHIR methods with its
 * signatures and return shapes. Each call to the server is one host call (`host.call(method,
 * ...args)`, answered on the main thread by bot-host.ts with the bot's access); what needs no
 * server (URLs, `searchOne`, `searchResources`' ResourceArray, `searchResourcePages`) is done
 * here. A failed call rejects with an Error made when the bot called, so that its stack shows the
 * bot's own line, whose message names the method (`fhir.readResource: …`) and which carries the
 * OperationOutcome as `outcome`, as Medplum's OperationOutcomeError does. Methods that need
 * services Graphir has not (fhir-unsupported.ts) throw saying so. The worker compiles the client
 * on the first read of a property of the `fhir` object a bot gets (sandbox-isolate.ts).
 */
import { UNSUPPORTED_ASYNC, UNSUPPORTED_SYNC, unsupportedMessage } from './fhir-unsupported.js';
import { base64Of, blobOf } from './fhir-binary.js';
import { hasPair, queryPairs, withPair, type QueryPairs } from './fhir-query.js';
import type { IsolateHost } from './isolate-host.js';

/**
 * The isolate's Error, as it was while the isolate was prepared (the client is compiled later,
 * perhaps after a bot replaced the global): set by createFhirClient.
 */
let ErrorType: ErrorConstructor = Error;
const { assign, freeze } = Object;

interface Bundle {
  readonly entry?: readonly { readonly resource?: unknown }[];
  readonly link?: readonly { readonly relation?: string; readonly url?: string }[];
}
type Resource = { readonly resourceType?: unknown; readonly id?: unknown };

/** The client, frozen; `baseUrl` is the execution's `event.baseUrl`. */
export function createFhirClient(
  host: IsolateHost,
  originalError: ErrorConstructor,
  baseUrl: string,
): object {
  ErrorType = originalError;
  const fhirBase = () => `${baseUrl}fhir/R4/`;

  /** `host.call(wire, ...args)` for `method`, failing as described above. */
  const call = <T>(method: string, wire: string, args: unknown[]): Promise<T> => {
    const failure = new ErrorType(method);
    return host.call(wire, ...args).then(undefined, (error: unknown) => {
      throw named(failure, method, error);
    }) as Promise<T>;
  };
  /** Work done here before (or instead of) a host call, failing the same way. */
  const local = <T>(method: string, work: () => Promise<T>): Promise<T> => {
    const failure = new ErrorType(method);
    let started: Promise<T>;
    try {
      started = work();
    } catch (error) {
      started = Promise.reject(error);
    }
    return started.then(undefined, (error: unknown) => {
      throw named(failure, method, error);
    });
  };

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
  const request = (method: string, verb: string, url: unknown, body?: unknown, type?: unknown) =>
    call(method, 'request', [verb, String(url), ...bodyArgs(body, type)]);

  const client: Record<string, unknown> = {
    getBaseUrl: () => baseUrl,
    fhirUrl: (...path: string[]) => newUrl('fhirUrl', fhirBase() + path.join('/')),
    fhirSearchUrl: (type: string, query?: unknown) => {
      const pairs = queryPairs(query);
      const search = pairs.length ? `?${encodedQuery('fhirSearchUrl', pairs)}` : '';
      return newUrl('fhirSearchUrl', `${fhirBase()}${type}${search}`);
    },

    readResource: (type: unknown, id: unknown) => call('readResource', 'readResource', [type, id]),
    readReference: (reference: { reference?: unknown } | undefined) =>
      local('readReference', () => {
        const text = reference?.reference;
        if (typeof text !== 'string' || text === '') throw new ErrorType('Missing reference');
        const [type, id] = text.split('/');
        if (!type || !id) throw new ErrorType('Invalid reference');
        return call('readReference', 'readResource', [type, id]);
      }),
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
    readHistory: (type: unknown, id: unknown) => call('readHistory', 'readHistory', [type, id]),
    readVersion: (type: unknown, id: unknown, vid: unknown) =>
      call('readVersion', 'readVersion', [type, id, vid]),

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

    createResource: (resource: unknown) =>
      call('createResource', 'createResource', [checked(resource)]),
    createResourceIfNoneExist: (resource: unknown, query: unknown) =>
      call('createResourceIfNoneExist', 'createResourceIfNoneExist', [
        checked(resource),
        String(query ?? ''),
      ]),
    updateResource: (resource: unknown) =>
      call('updateResource', 'updateResource', [checked(resource)]),
    upsertResource: (resource: unknown, query: unknown) =>
      call('upsertResource', 'upsertResource', [checked(resource), queryPairs(query)]),
    patchResource: (type: unknown, id: unknown, operations: unknown) =>
      call('patchResource', 'patchResource', [type, id, operations]),
    deleteResource: (type: unknown, id: unknown) =>
      call('deleteResource', 'deleteResource', [type, id]),
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

    createBinary: (
      data: unknown,
      filename?: unknown,
      contentType?: unknown,
      onProgress?: unknown,
    ) =>
      local('createBinary', async () => {
        const options = isBinaryOptions(data) ? data : { data, filename, contentType, onProgress };
        const base64 = await base64Of(options.data);
        return call('createBinary', 'createBinary', [
          base64,
          options.contentType ?? null,
          options.filename ?? null,
        ]);
      }),
    download: (url: unknown) =>
      local('download', async () => {
        const { contentType, data } = await call<{ contentType: string; data: string }>(
          'download',
          'download',
          [String(url)],
        );
        return blobOf(data, contentType);
      }),

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
  for (const method of UNSUPPORTED_ASYNC.split(' '))
    client[method] = () => Promise.reject(new ErrorType(unsupportedMessage(method)));
  for (const method of UNSUPPORTED_SYNC.split(' '))
    client[method] = () => {
      throw new ErrorType(unsupportedMessage(method));
    };
  return freeze(client);
}

/** Errors `named` made: one that passes through several layers of the client is named once. */
const namedErrors = new WeakSet<object>();

/** `failure` (made when the bot called) with the method and the cause's message and outcome. */
function named(failure: Error, method: string, error: unknown): Error {
  if (typeof error === 'object' && error !== null && namedErrors.has(error)) return error as Error;
  const { message, outcome } = (error ?? {}) as { message?: unknown; outcome?: unknown };
  failure.message = `fhir.${method}: ${typeof message === 'string' ? message : String(error)}`;
  if (outcome !== undefined) assign(failure, { outcome });
  namedErrors.add(failure);
  return failure;
}

/** Medplum's ResourceArray: the entries' resources, with the Bundle as `bundle`. */
function resourceArray(bundle: Bundle): unknown[] {
  return assign(
    (bundle.entry ?? []).map((entry) => entry.resource),
    { bundle },
  );
}

function checked(resource: unknown): unknown {
  if (!resource || typeof (resource as Resource).resourceType !== 'string')
    throw new ErrorType('Missing resourceType');
  return resource;
}

/**
 * A request body as Medplum sends it: a string as it is (`text/plain` unless a type is given),
 * anything else as JSON (`application/fhir+json` unless a type is given).
 */
function bodyArgs(body: unknown, contentType: unknown): [unknown, string | null] {
  const type = typeof contentType === 'string' ? contentType : null;
  if (body === undefined) return [null, type];
  if (typeof body === 'string') return [{ text: body }, type ?? 'text/plain'];
  return [{ json: body }, type ?? 'application/fhir+json'];
}

interface BinaryOptions {
  readonly data: unknown;
  readonly contentType?: unknown;
  readonly filename?: unknown;
  readonly onProgress?: unknown;
}

/** Medplum 5's `createBinary({ data, contentType, filename })` form. */
function isBinaryOptions(value: unknown): value is BinaryOptions {
  return typeof value === 'object' && value !== null && 'data' in value && 'contentType' in value;
}

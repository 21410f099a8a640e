/**
 * A client for a Graphir server: FHIR REST, GraphQL and bot execution over `fetch`.
 *
 * Built on the global `fetch` only (no Node-specific APIs), so it runs in browsers, in Node ≥ 20
 * and in other runtimes with `fetch`. Its methods carry MedplumClient's names, arguments and
 * answers (@medplum/core), so code written for Medplum runs against Graphir, and those a bot's
 * `fhir` client has behave as they do there.
 */
import type {
  Bundle,
  OperationOutcome,
  Reference,
  Resource,
  ResourceType,
} from '../../generated/types/index.js';
import { executeBot, type BotIdentifier, type ExecuteBotOptions } from './bot-execution.js';
import { search, searchOne, searchPages, resourceArray } from './fhir-search.js';
import { FhirTransport, type RequestOptions } from './fhir-transport.js';
import {
  graphqlRequest,
  postGraphql,
  type GraphqlResponse,
  type GraphqlVariables,
} from './graphql-call.js';
import type { ResourceArray, ResourceOf, WithId } from './resource-types.js';
import { toSearchParams, type SearchQuery } from './search-query.js';
import { TokenSource, type Credentials } from './token-source.js';

export interface GraphirClientOptions extends Credentials {
  /** The server root, e.g. `http://localhost:8080`; FHIR calls go to `${baseUrl}/fhir/R4`. */
  baseUrl: string;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

/** Which versions `readHistory` asks for. */
export interface ReadHistoryOptions {
  readonly count?: number;
  readonly offset?: number;
}

/** One JSON Patch operation (RFC 6902). */
export interface PatchOperation {
  readonly op: 'add' | 'remove' | 'replace' | 'copy' | 'move' | 'test';
  readonly path: string;
  /** The source path of `copy` and `move`. */
  readonly from?: string;
  readonly value?: any;
}

const JSON_PATCH = 'application/json-patch+json';

export class GraphirClient {
  readonly baseUrl: string;
  readonly fhirBaseUrl: string;
  readonly #tokens: TokenSource;
  readonly #transport: FhirTransport;

  constructor(options: GraphirClientOptions) {
    if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '')
      throw new TypeError('GraphirClient needs a baseUrl');
    const fetchImpl = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.baseUrl = options.baseUrl.replace(/(?<!\/)\/+$/, '');
    this.#tokens = new TokenSource(options, `${this.baseUrl}/oauth2/token`, fetchImpl);
    this.#transport = new FhirTransport(this.baseUrl, this.#tokens, fetchImpl);
    this.fhirBaseUrl = this.#transport.fhirBaseUrl;
  }

  /** The current bearer token, fetched or renewed first when needed. */
  getAccessToken(): Promise<string> {
    return this.#tokens.current();
  }

  async readResource<K extends ResourceType>(
    resourceType: K,
    id: string,
    options?: RequestOptions,
  ): Promise<WithId<ResourceOf<K>>> {
    return (await this.#transport.fhir('GET', idPath(resourceType, id), {}, options)) as WithId<
      ResourceOf<K>
    >;
  }

  /** The resource a `Type/id` reference points to; a reference without one is refused. */
  async readReference<T extends Resource = Resource>(
    reference: Reference,
    options?: RequestOptions,
  ): Promise<WithId<T>> {
    const literal = reference?.reference;
    if (!literal) throw new Error('Missing reference');
    const [resourceType, id] = literal.split('/');
    if (!resourceType || !id) throw new Error('Invalid reference');
    return (await this.readResource(resourceType as ResourceType, id, options)) as WithId<T>;
  }

  /** The resource's versions as a `history` Bundle, newest first. */
  async readHistory<K extends ResourceType>(
    resourceType: K,
    id: string,
    options?: ReadHistoryOptions,
    requestOptions?: RequestOptions,
  ): Promise<Bundle> {
    const params = new URLSearchParams();
    if (options?.count) params.set('_count', String(options.count));
    if (options?.offset) params.set('_offset', String(options.offset));
    const search = params.toString();
    const query = search ? `?${search}` : '';
    return (await this.#transport.fhir(
      'GET',
      `${idPath(resourceType, id)}/_history${query}`,
      {},
      requestOptions,
    )) as Bundle;
  }

  /** The `searchset` Bundle of one page of results. */
  search<K extends ResourceType>(
    resourceType: K,
    query?: SearchQuery,
    options?: RequestOptions,
  ): Promise<Bundle> {
    return search(this.#transport, resourceType, query, options);
  }

  /** One page's resources (matches, then included ones), with the Bundle as `.bundle`. */
  async searchResources<K extends ResourceType>(
    resourceType: K,
    query?: SearchQuery,
    options?: RequestOptions,
  ): Promise<ResourceArray<WithId<ResourceOf<K>>>> {
    return resourceArray(await search(this.#transport, resourceType, query, options));
  }

  /** The first match, or `undefined` when nothing matches. */
  searchOne<K extends ResourceType>(
    resourceType: K,
    query?: SearchQuery,
    options?: RequestOptions,
  ): Promise<WithId<ResourceOf<K>> | undefined> {
    return searchOne(this.#transport, resourceType, query, options);
  }

  /** Every page in turn (1000 a page unless `_count` says otherwise), as `searchResources` gives one. */
  searchResourcePages<K extends ResourceType>(
    resourceType: K,
    query?: SearchQuery,
    options?: RequestOptions,
  ): AsyncGenerator<ResourceArray<WithId<ResourceOf<K>>>> {
    return searchPages(this.#transport, resourceType, query, options);
  }

  async createResource<T extends Resource>(
    resource: T,
    options?: RequestOptions,
  ): Promise<WithId<ResourceOf<T['resourceType']>>> {
    return (await this.#transport.fhir(
      'POST',
      resourceTypeOf(resource),
      { body: resource },
      options,
    )) as WithId<ResourceOf<T['resourceType']>>;
  }

  /**
   * Creates the resource unless one matches `query` (`If-None-Exist`): answers the one match, or
   * the new resource; several matches are refused (412).
   */
  async createResourceIfNoneExist<T extends Resource>(
    resource: T,
    query: string,
    options?: RequestOptions,
  ): Promise<WithId<ResourceOf<T['resourceType']>>> {
    if (typeof query !== 'string' || query === '')
      throw new TypeError('createResourceIfNoneExist needs a search query');
    return (await this.#transport.fhir(
      'POST',
      resourceTypeOf(resource),
      { body: resource, headers: { 'If-None-Exist': query } },
      options,
    )) as WithId<ResourceOf<T['resourceType']>>;
  }

  async updateResource<T extends Resource>(
    resource: T,
    options?: RequestOptions,
  ): Promise<WithId<ResourceOf<T['resourceType']>>> {
    const resourceType = resourceTypeOf(resource);
    if (!resource.id) throw new TypeError('Missing id');
    const path = idPath(resourceType, resource.id);
    const updated = await this.#transport.fhir('PUT', path, { body: resource }, options);
    return (updated ?? resource) as WithId<ResourceOf<T['resourceType']>>;
  }

  /**
   * Updates the one resource that matches `query`, or creates it when none does, in one request
   * (conditional update, `PUT Type?query`); several matches are refused (412).
   */
  async upsertResource<T extends Resource>(
    resource: T,
    query: SearchQuery,
    options?: RequestOptions,
  ): Promise<WithId<ResourceOf<T['resourceType']>>> {
    const params = toSearchParams(query).toString();
    if (params === '') throw new TypeError('upsertResource needs a search query');
    const path = `${resourceTypeOf(resource)}?${params}`;
    const written = await this.#transport.fhir('PUT', path, { body: resource }, options);
    return (written ?? resource) as WithId<ResourceOf<T['resourceType']>>;
  }

  /** Applies JSON Patch operations (`PATCH`, `application/json-patch+json`); answers the result. */
  async patchResource<K extends ResourceType>(
    resourceType: K,
    id: string,
    operations: PatchOperation[],
    options?: RequestOptions,
  ): Promise<WithId<ResourceOf<K>>> {
    if (!Array.isArray(operations))
      throw new TypeError('patchResource needs an array of JSON Patch operations');
    return (await this.#transport.fhir(
      'PATCH',
      idPath(resourceType, id),
      { body: operations, headers: { 'Content-Type': JSON_PATCH } },
      options,
    )) as WithId<ResourceOf<K>>;
  }

  /** Deletes the resource; answers the server's OperationOutcome. */
  async deleteResource(
    resourceType: ResourceType,
    id: string,
    options?: RequestOptions,
  ): Promise<OperationOutcome | undefined> {
    return (await this.#transport.fhir('DELETE', idPath(resourceType, id), {}, options)) as
      OperationOutcome | undefined;
  }

  /** A `transaction` or `batch` Bundle, posted to the FHIR base; answers the response Bundle. */
  async executeBatch(bundle: Bundle, options?: RequestOptions): Promise<Bundle> {
    return (await this.#transport.fhir('POST', '', { body: bundle }, options)) as Bundle;
  }

  /**
   * A GraphQL request, with MedplumClient's arguments `(query, operationName?, variables?,
   * options?)` or Graphir's `(query, variables, operationName?)` (an object second argument).
   * GraphQL errors are returned in `errors`; other failures throw a GraphirError.
   */
  graphql<T = any>(
    query: string,
    operationName?: string | null,
    variables?: GraphqlVariables | null,
    options?: RequestOptions,
  ): Promise<GraphqlResponse<T>>;
  graphql<T = any>(
    query: string,
    variables: GraphqlVariables,
    operationName?: string | null,
    options?: RequestOptions,
  ): Promise<GraphqlResponse<T>>;
  async graphql<T = any>(
    query: string,
    second?: string | GraphqlVariables | null,
    third?: string | GraphqlVariables | null,
    options?: RequestOptions,
  ): Promise<GraphqlResponse<T>> {
    return postGraphql<T>(this.#transport, graphqlRequest(query, second, third), options);
  }

  /**
   * Runs a bot by id or by identifier. The input's Content-Type is inferred when not given:
   * string → `text/plain`, `Hl7Message` → HL7 v2, FHIR resource → `application/fhir+json`,
   * `URLSearchParams` → form, anything else → `application/json`. With `{ method: 'GET' }` the
   * input (a search query's forms) becomes query parameters. The answer is read by its
   * Content-Type: JSON → value, HL7 v2 → `Hl7Message`, text → string.
   */
  async executeBot<T = any>(
    idOrIdentifier: string | BotIdentifier,
    data?: unknown,
    contentType?: string | ExecuteBotOptions,
    options?: RequestOptions,
  ): Promise<T> {
    return (await executeBot(this.#transport, idOrIdentifier, data, contentType, options)) as T;
  }
}

function resourceTypeOf(resource: Resource): ResourceType {
  if (!resource || typeof resource.resourceType !== 'string' || !resource.resourceType)
    throw new TypeError('Missing resourceType');
  return resource.resourceType;
}

function idPath(resourceType: string, id: string | undefined): string {
  if (typeof id !== 'string' || id === '')
    throw new TypeError('The "id" parameter cannot be null, undefined, or an empty string.');
  return `${resourceType}/${encodeURIComponent(id)}`;
}

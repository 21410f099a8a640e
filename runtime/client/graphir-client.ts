/**
 * A small client for a Graphir server: FHIR REST, GraphQL and bot execution over `fetch`.
 *
 * Built on the global `fetch` only (no Node-specific APIs), so it runs in browsers, in Node ≥ 20
 * and in other runtimes with `fetch`. Its FHIR methods carry the same names and behaviour as the
 * `fhir` client bots get inside the sandbox, so code can move between the two.
 */
import type {
  Bundle,
  OperationOutcome,
  Resource,
  ResourceType,
} from '../../generated/types/index.js';
import { Hl7Message } from '../hl7/hl7-message.js';

/** The resource interface of one resource type, e.g. `ResourceOf<'Patient'>` is `Patient`. */
export type ResourceOf<K extends ResourceType> = Extract<Resource, { resourceType: K }>;

/** A search query: `name=x&gender=male`, `URLSearchParams`, or an object of values or arrays. */
export type SearchQuery =
  | string
  | URLSearchParams
  | Record<string, string | number | boolean | readonly (string | number | boolean)[] | undefined>;

export interface GraphirClientOptions {
  /** The server root, e.g. `http://localhost:8080`; FHIR calls go to `${baseUrl}/fhir/R4`. */
  baseUrl: string;
  /** Client credentials: the client fetches and renews its tokens itself. */
  clientId?: string;
  clientSecret?: string;
  /** Optional scope sent with client credentials. */
  scope?: string;
  /** A bearer token to use as it is (not renewed unless credentials are given too). */
  accessToken?: string;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface GraphqlError {
  message: string;
  locations?: { line: number; column: number }[];
  path?: (string | number)[];
  extensions?: { resource?: OperationOutcome; [key: string]: unknown };
}

export interface GraphqlResponse<T = unknown> {
  data?: T | null;
  errors?: GraphqlError[];
}

export interface ExecuteBotOptions {
  /** The request's Content-Type; inferred from the input when absent. */
  contentType?: string;
  /** POST (default) sends the input as the body; GET sends it as query parameters. */
  method?: 'GET' | 'POST';
}

export type BotIdentifier = { system: string; value: string };

/** A failed request: the HTTP status and, when the body was one, the OperationOutcome. */
export class GraphirError extends Error {
  readonly status: number;
  readonly outcome: OperationOutcome | undefined;

  constructor(status: number, message: string, outcome?: OperationOutcome) {
    super(message);
    this.name = 'GraphirError';
    this.status = status;
    this.outcome = outcome;
  }
}

export const HL7_CONTENT_TYPE = 'x-application/hl7-v2+er7';
const FHIR_JSON = 'application/fhir+json';
const FORM = 'application/x-www-form-urlencoded';
/** Renew a token this long before it expires (at most a fifth of its lifetime). */
const RENEW_MARGIN_MS = 60_000;

interface Token {
  value: string;
  /** Epoch milliseconds after which it is renewed; Infinity for a given token. */
  renewAt: number;
}

interface Call {
  method: string;
  body?: string;
  contentType?: string;
  accept?: string;
}

export class GraphirClient {
  readonly baseUrl: string;
  readonly fhirBaseUrl: string;
  readonly #options: GraphirClientOptions;
  readonly #fetch: typeof fetch;
  #token: Token | undefined;
  #pendingToken: Promise<string> | undefined;

  constructor(options: GraphirClientOptions) {
    if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '')
      throw new TypeError('GraphirClient needs a baseUrl');
    const hasCredentials = options.clientId !== undefined && options.clientSecret !== undefined;
    if (!hasCredentials && !options.accessToken)
      throw new TypeError('GraphirClient needs clientId and clientSecret, or an accessToken');
    this.#options = options;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fhirBaseUrl = `${this.baseUrl}/fhir/R4`;
    this.#fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    if (options.accessToken) this.#token = { value: options.accessToken, renewAt: Infinity };
  }

  /** The current bearer token, fetched or renewed first when needed. */
  async getAccessToken(): Promise<string> {
    if (this.#token && Date.now() < this.#token.renewAt) return this.#token.value;
    if (!this.#canRenew()) {
      if (this.#token) return this.#token.value;
      throw new GraphirError(401, 'No access token and no client credentials');
    }
    this.#pendingToken ??= this.#fetchToken().finally(() => {
      this.#pendingToken = undefined;
    });
    return this.#pendingToken;
  }

  #canRenew(): boolean {
    return this.#options.clientId !== undefined && this.#options.clientSecret !== undefined;
  }

  async #fetchToken(): Promise<string> {
    const { clientId, clientSecret, scope } = this.#options;
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId!,
      client_secret: clientSecret!,
    });
    if (scope) body.set('scope', scope);
    const response = await this.#fetch(`${this.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': FORM, Accept: 'application/json' },
      body: body.toString(),
    });
    const json = (await readJson(response)) as
      | { access_token?: string; expires_in?: number; error?: string; error_description?: string }
      | undefined;
    if (!response.ok || !json || typeof json.access_token !== 'string') {
      const reason = json?.error_description ?? json?.error ?? response.statusText;
      throw new GraphirError(response.status, `Token request failed: ${reason}`);
    }
    const lifetimeMs = typeof json.expires_in === 'number' ? json.expires_in * 1000 : 3_600_000;
    const margin = Math.min(RENEW_MARGIN_MS, lifetimeMs / 5);
    this.#token = { value: json.access_token, renewAt: Date.now() + lifetimeMs - margin };
    return json.access_token;
  }

  /** A request with the bearer token; on a 401 it renews the token once and tries again. */
  async #send(url: string, call: Call): Promise<Response> {
    const attempt = async () => {
      const headers: Record<string, string> = {
        Authorization: `Bearer ${await this.getAccessToken()}`,
      };
      if (call.contentType !== undefined) headers['Content-Type'] = call.contentType;
      if (call.accept !== undefined) headers.Accept = call.accept;
      return this.#fetch(url, { method: call.method, headers, body: call.body });
    };
    const response = await attempt();
    if (response.status !== 401 || !this.#canRenew()) return response;
    await response.body?.cancel().catch(() => undefined);
    this.#token = undefined;
    return attempt();
  }

  /** A FHIR call whose answer is FHIR JSON; failures throw {@link GraphirError}. */
  async #fhir(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await this.#send(`${this.fhirBaseUrl}/${path}`, {
      method,
      accept: FHIR_JSON,
      ...(body === undefined ? {} : { body: JSON.stringify(body), contentType: FHIR_JSON }),
    });
    if (!response.ok) throw await errorOf(response);
    return readJson(response);
  }

  readResource<K extends ResourceType>(type: K, id: string): Promise<ResourceOf<K>> {
    return this.#fhir('GET', `${type}/${encodeURIComponent(id)}`) as Promise<ResourceOf<K>>;
  }

  /** The matching resources (not `_include`d ones) of one page of search results. */
  async searchResources<K extends ResourceType>(
    type: K,
    query?: SearchQuery,
  ): Promise<ResourceOf<K>[]> {
    const params = toParams(query);
    const search = params.toString();
    const bundle = (await this.#fhir('GET', search ? `${type}?${search}` : type)) as Bundle;
    return (bundle.entry ?? [])
      .filter((entry) => entry.resource && (entry.search?.mode ?? 'match') === 'match')
      .map((entry) => entry.resource as ResourceOf<K>);
  }

  /** The first match, or `undefined` when nothing matches. */
  async searchOne<K extends ResourceType>(
    type: K,
    query?: SearchQuery,
  ): Promise<ResourceOf<K> | undefined> {
    const params = toParams(query);
    params.set('_count', '1');
    return (await this.searchResources(type, params))[0];
  }

  createResource<T extends Resource>(resource: T): Promise<ResourceOf<T['resourceType']>> {
    return this.#fhir('POST', resourceTypeOf(resource), resource) as Promise<
      ResourceOf<T['resourceType']>
    >;
  }

  updateResource<T extends Resource>(resource: T): Promise<ResourceOf<T['resourceType']>> {
    const type = resourceTypeOf(resource);
    if (typeof resource.id !== 'string' || resource.id === '')
      throw new TypeError('updateResource needs a resource with an id');
    return this.#fhir('PUT', `${type}/${encodeURIComponent(resource.id)}`, resource) as Promise<
      ResourceOf<T['resourceType']>
    >;
  }

  async deleteResource(type: ResourceType, id: string): Promise<void> {
    await this.#fhir('DELETE', `${type}/${encodeURIComponent(id)}`);
  }

  /** A `transaction` or `batch` Bundle; answers with the response Bundle. */
  executeBatch(bundle: Bundle): Promise<Bundle> {
    return this.#fhir('POST', '', bundle) as Promise<Bundle>;
  }

  /**
   * A GraphQL request. GraphQL errors (a query that does not validate, a field that fails) are
   * returned in `errors`; other failures throw {@link GraphirError}.
   */
  async graphql<T = unknown>(
    query: string,
    variables?: Record<string, unknown>,
    operationName?: string,
  ): Promise<GraphqlResponse<T>> {
    const response = await this.#send(`${this.fhirBaseUrl}/$graphql`, {
      method: 'POST',
      contentType: 'application/json',
      accept: 'application/json',
      body: JSON.stringify({
        query,
        ...(variables === undefined ? {} : { variables }),
        ...(operationName === undefined ? {} : { operationName }),
      }),
    });
    if (response.status === 200 || response.status === 400) {
      const text = await response.text();
      const json = parseJson(text);
      if (isGraphqlBody(json)) return json as GraphqlResponse<T>;
      throw failure(response.status, json, text);
    }
    throw await errorOf(response);
  }

  /**
   * Runs a bot by id or by identifier. The input's Content-Type is inferred when not given:
   * string → `text/plain`, `Hl7Message` → HL7 v2, FHIR resource → `application/fhir+json`,
   * `URLSearchParams` → form, anything else → `application/json`. With `method: 'GET'` the
   * input (an object of strings or `URLSearchParams`) becomes query parameters. The answer is
   * read by its Content-Type: JSON → value, HL7 v2 → `Hl7Message`, text → string.
   */
  async executeBot<T = any>(
    idOrIdentifier: string | BotIdentifier,
    input?: unknown,
    contentTypeOrOptions?: string | ExecuteBotOptions,
  ): Promise<T> {
    const options: ExecuteBotOptions =
      typeof contentTypeOrOptions === 'string'
        ? { contentType: contentTypeOrOptions }
        : (contentTypeOrOptions ?? {});
    const method = options.method ?? 'POST';
    const params = new URLSearchParams();
    let path: string;
    if (typeof idOrIdentifier === 'string') {
      path = `Bot/${encodeURIComponent(idOrIdentifier)}/$execute`;
    } else {
      path = 'Bot/$execute';
      params.set('identifier', `${idOrIdentifier.system}|${idOrIdentifier.value}`);
    }
    const call: Call = { method };
    if (method === 'GET') {
      if (input !== undefined && input !== null) {
        for (const [key, value] of toParams(input as SearchQuery)) params.append(key, value);
      }
    } else if (input !== undefined) {
      call.contentType = options.contentType ?? contentTypeOf(input);
      call.body = bodyOf(input);
    } else if (options.contentType !== undefined) {
      call.contentType = options.contentType;
    }
    const search = params.toString();
    const response = await this.#send(
      `${this.fhirBaseUrl}/${path}${search ? `?${search}` : ''}`,
      call,
    );
    if (!response.ok) throw await errorOf(response);
    return (await readByContentType(response)) as T;
  }
}

function resourceTypeOf(resource: Resource): string {
  if (!resource || typeof resource.resourceType !== 'string')
    throw new TypeError('Expected a FHIR resource with a resourceType');
  return resource.resourceType;
}

function toParams(query: SearchQuery | undefined): URLSearchParams {
  if (query === undefined || query === null) return new URLSearchParams();
  if (query instanceof URLSearchParams) return new URLSearchParams(query);
  if (typeof query === 'string') return new URLSearchParams(query.replace(/^\?/, ''));
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  return params;
}

function isResource(value: unknown): value is Resource {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { resourceType?: unknown }).resourceType === 'string'
  );
}

function contentTypeOf(input: unknown): string {
  if (typeof input === 'string') return 'text/plain';
  if (input instanceof Hl7Message) return HL7_CONTENT_TYPE;
  if (input instanceof URLSearchParams) return FORM;
  if (isResource(input)) return FHIR_JSON;
  return 'application/json';
}

function bodyOf(input: unknown): string {
  if (typeof input === 'string') return input;
  if (input instanceof Hl7Message || input instanceof URLSearchParams) return input.toString();
  return JSON.stringify(input);
}

function mediaType(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

async function readByContentType(response: Response): Promise<unknown> {
  const type = mediaType(response);
  const text = await response.text();
  if (isJsonType(type)) return text === '' ? undefined : JSON.parse(text);
  if (type === HL7_CONTENT_TYPE) return Hl7Message.parse(text);
  return text;
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  return text === '' ? undefined : parseJson(text);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isGraphqlBody(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return 'data' in value || Array.isArray((value as { errors?: unknown }).errors);
}

function isOutcome(value: unknown): value is OperationOutcome {
  return isResource(value) && value.resourceType === 'OperationOutcome';
}

async function errorOf(response: Response): Promise<GraphirError> {
  const text = await response.text().catch(() => '');
  return failure(response.status, parseJson(text), text || response.statusText);
}

function failure(status: number, json: unknown, text: string): GraphirError {
  if (isOutcome(json)) {
    const issue = json.issue?.[0];
    const message = issue?.diagnostics ?? issue?.details?.text ?? issue?.code ?? `HTTP ${status}`;
    return new GraphirError(status, message, json);
  }
  return new GraphirError(status, `HTTP ${status}: ${text.slice(0, 200)}`);
}

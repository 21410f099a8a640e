/**
 * Requests to a Graphir server with a bearer token: a 401 gets the token renewed and the request
 * sent once more; FHIR calls read FHIR JSON back and turn a failure into a GraphirError.
 */
import { errorOf } from './graphir-error.js';
import { FHIR_JSON, readJson } from './response-body.js';
import type { TokenSource } from './token-source.js';

/**
 * What MedplumClient's methods take as their last argument, less what the method itself decides:
 * `headers`, `signal`, `cache` and the rest of `fetch`'s options, passed to every request.
 */
export type RequestOptions = Omit<RequestInit, 'method' | 'body'>;

export interface Call {
  method: string;
  body?: string;
  /** The method's own headers; they win over `RequestOptions.headers`. */
  headers?: Record<string, string>;
}

export interface FhirCall {
  /** Sent as FHIR JSON unless `headers` name another Content-Type. */
  body?: unknown;
  headers?: Record<string, string>;
}

export class FhirTransport {
  /** The server root, without a trailing slash. */
  readonly baseUrl: string;
  /** `${baseUrl}/fhir/R4`. */
  readonly fhirBaseUrl: string;
  readonly #tokens: TokenSource;
  readonly #fetch: typeof fetch;

  constructor(baseUrl: string, tokens: TokenSource, fetchImpl: typeof fetch) {
    this.baseUrl = baseUrl;
    this.fhirBaseUrl = `${baseUrl}/fhir/R4`;
    this.#tokens = tokens;
    this.#fetch = fetchImpl;
  }

  async send(url: string, call: Call, options?: RequestOptions): Promise<Response> {
    const attempt = async () => {
      const headers = new Headers(options?.headers);
      for (const [name, value] of Object.entries(call.headers ?? {})) headers.set(name, value);
      headers.set('Authorization', `Bearer ${await this.#tokens.current()}`);
      return this.#fetch(url, {
        ...options,
        method: call.method,
        headers: Object.fromEntries(headers),
        body: call.body,
      });
    };
    const response = await attempt();
    if (response.status !== 401 || !this.#tokens.canRenew) return response;
    await response.body?.cancel().catch(() => undefined);
    this.#tokens.discard();
    return attempt();
  }

  /** A call under the FHIR base answered with FHIR JSON (`undefined` for an empty body). */
  async fhir(
    method: string,
    path: string,
    call: FhirCall = {},
    options?: RequestOptions,
  ): Promise<unknown> {
    const headers: Record<string, string> = { Accept: FHIR_JSON };
    if (call.body !== undefined) headers['Content-Type'] = FHIR_JSON;
    const response = await this.send(
      `${this.fhirBaseUrl}/${path}`,
      {
        method,
        headers: { ...headers, ...call.headers },
        ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
      },
      options,
    );
    if (!response.ok) throw await errorOf(response);
    return readJson(response);
  }
}

/**
 * Headers, Request and Response as the Fetch Standard defines them, with bodies held in memory
 * (no streams: `body` is absent, the readers `text()`, `json()`, `arrayBuffer()`, `bytes()`,
 * `blob()` and `formData()` are there). `fetch` itself (isolate/fetch.ts) is built on these
 * classes, read from the globals when called.
 */
import { AbortSignal, AbortController } from './web-events.js';
import {
  Blob,
  FormData,
  blobBytes,
  bytesOf,
  formDataOfMultipart,
  isBufferSource,
  multipartOf,
} from './web-blob.js';
import { decodeUtf8, encodeUtf8 } from './web-utf8.js';

/** The characters of a header name (an HTTP token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function headerName(name: unknown): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Invalid header name: "${text}"`);
  return text.toLowerCase();
}

/** Leading and trailing HTTP whitespace removed; NUL, CR and LF refused. */
function headerValue(value: unknown): string {
  // The lookbehind starts a trailing match only at the first blank of a run: linear, not quadratic.
  const text = String(value).replace(/^[\t\n\r ]+|(?<![\t\n\r ])[\t\n\r ]+$/g, '');
  if (/[\0\r\n]/.test(text)) throw new TypeError(`Invalid header value: "${text}"`);
  return text;
}

export type HeadersInit = Headers | Iterable<readonly [string, string]> | Record<string, string>;

export class Headers {
  /** Lowercased name → values in the order they were appended. */
  readonly #values = new Map<string, string[]>();

  constructor(init?: HeadersInit) {
    if (init === undefined || init === null) return;
    if (typeof init !== 'object') throw new TypeError('Headers init must be an object');
    if (init instanceof Headers) {
      for (const [name, values] of init.#values) this.#values.set(name, [...values]);
    } else if (Symbol.iterator in init) {
      for (const pair of init as Iterable<readonly [string, string]>) {
        const entry = [...(pair as Iterable<string>)];
        if (entry.length !== 2) throw new TypeError('Each header must be a [name, value] pair');
        this.append(entry[0], entry[1]);
      }
    } else {
      for (const name of Object.keys(init))
        this.append(name, (init as Record<string, string>)[name]);
    }
  }

  append(name: string, value: string): void {
    const key = headerName(name);
    const list = this.#values.get(key);
    if (list) list.push(headerValue(value));
    else this.#values.set(key, [headerValue(value)]);
  }

  set(name: string, value: string): void {
    this.#values.set(headerName(name), [headerValue(value)]);
  }

  delete(name: string): void {
    this.#values.delete(headerName(name));
  }

  get(name: string): string | null {
    return this.#values.get(headerName(name))?.join(', ') ?? null;
  }

  getSetCookie(): string[] {
    return [...(this.#values.get('set-cookie') ?? [])];
  }

  has(name: string): boolean {
    return this.#values.has(headerName(name));
  }

  forEach(
    callback: (value: string, key: string, parent: Headers) => void,
    thisArg?: unknown,
  ): void {
    for (const [key, value] of this) callback.call(thisArg, value, key, this);
  }

  /** Sorted by name, values joined, except each Set-Cookie on its own. */
  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#values.keys()].sort()) {
      const values = this.#values.get(name);
      if (!values) continue;
      if (name === 'set-cookie') for (const value of values) yield [name, value];
      else yield [name, values.join(', ')];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }
}

export type BodyInit = string | ArrayBuffer | ArrayBufferView | Blob | FormData | object;

/** A body's bytes and the Content-Type it implies, if any. */
function extractBody(init: BodyInit): { bytes: Uint8Array; type: string | null } {
  if (typeof init === 'string')
    return { bytes: encodeUtf8(init), type: 'text/plain;charset=UTF-8' };
  if (init instanceof Blob) return { bytes: blobBytes(init), type: init.type || null };
  if (isBufferSource(init)) return { bytes: bytesOf(init), type: null };
  if (init instanceof FormData) {
    const { bytes, boundary } = multipartOf(init);
    return { bytes, type: `multipart/form-data; boundary=${boundary}` };
  }
  // URLSearchParams, from the URL group, known by its tag so that this group does not load it.
  if (Object.prototype.toString.call(init) === '[object URLSearchParams]') {
    return {
      bytes: encodeUtf8(String(init)),
      type: 'application/x-www-form-urlencoded;charset=UTF-8',
    };
  }
  return { bytes: encodeUtf8(String(init)), type: 'text/plain;charset=UTF-8' };
}

/** The reading half of Request and Response: a body read once. */
abstract class Body {
  #bytes: Uint8Array | null;
  #used = false;

  constructor(bytes: Uint8Array | null) {
    this.#bytes = bytes;
  }

  abstract get headers(): Headers;

  get bodyUsed(): boolean {
    return this.#used;
  }

  /** The body's bytes, marking it used; empty when there is none. */
  #consume(): Uint8Array {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = this.#bytes !== null;
    return this.#bytes ?? new Uint8Array(0);
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return this.#consume().slice().buffer;
  }

  async bytes(): Promise<Uint8Array> {
    return this.#consume().slice();
  }

  async text(): Promise<string> {
    return decodeUtf8(this.#consume());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async blob(): Promise<Blob> {
    const type = this.headers.get('content-type') ?? '';
    return new Blob([this.#consume()], { type });
  }

  async formData(): Promise<FormData> {
    const type = this.headers.get('content-type') ?? '';
    const bytes = this.#consume();
    const boundary = /^multipart\/form-data\s*;.*\bboundary="?([^";]+)"?/i.exec(type)?.[1];
    if (boundary) return formDataOfMultipart(bytes, boundary);
    if (/^application\/x-www-form-urlencoded\b/i.test(type)) {
      const form = new FormData();
      const params = new URLSearchParams(decodeUtf8(bytes));
      for (const [name, value] of params) form.append(name, value);
      return form;
    }
    throw new TypeError(`Cannot read a body of type "${type}" as form data`);
  }

  /** The body, not consumed, for clone(): the clone gets a copy. */
  protected peekBody(): Uint8Array | null {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    return this.#bytes;
  }
}

/** A body with its Content-Type set, unless the headers say one already. */
function bodyOf(init: BodyInit | null | undefined, headers: Headers): Uint8Array | null {
  if (init === null || init === undefined) return null;
  const { bytes, type } = extractBody(init);
  if (type !== null && !headers.has('content-type')) headers.set('content-type', type);
  return bytes;
}

export interface ResponseInit {
  status?: number;
  statusText?: string;
  headers?: HeadersInit;
}

/** Statuses whose responses have no body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** What Response.error() and fetch (isolate/fetch.ts) set that the constructor cannot. */
interface ResponseState {
  status: number;
  type: string;
  url: string;
  redirected: boolean;
}
const states = new WeakMap<Response, ResponseState>();

export class Response extends Body {
  readonly #headers: Headers;
  readonly #statusText: string;

  constructor(body?: BodyInit | null, init: ResponseInit = {}) {
    const status = init.status === undefined ? 200 : Number(init.status);
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      throw new RangeError(`The status ${init.status} is not in the range 200 to 599`);
    }
    const statusText = init.statusText === undefined ? '' : String(init.statusText);
    if (/[^\t\x20-\x7e\x80-\xff]/.test(statusText)) throw new TypeError('Invalid statusText');
    const headers = new Headers(init.headers);
    if (body !== null && body !== undefined && NULL_BODY_STATUSES.has(status)) {
      throw new TypeError(`A response with status ${status} cannot have a body`);
    }
    super(bodyOf(body, headers));
    this.#headers = headers;
    this.#statusText = statusText;
    states.set(this, { status, type: 'default', url: '', redirected: false });
  }

  get headers(): Headers {
    return this.#headers;
  }

  get status(): number {
    return states.get(this)!.status;
  }

  get statusText(): string {
    return this.#statusText;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get type(): string {
    return states.get(this)!.type;
  }

  get url(): string {
    return states.get(this)!.url;
  }

  get redirected(): boolean {
    return states.get(this)!.redirected;
  }

  clone(): Response {
    const body = this.peekBody();
    const copy = new Response(body === null ? null : body.slice(), {
      statusText: this.#statusText,
      headers: this.#headers,
    });
    states.set(copy, { ...states.get(this)! });
    return copy;
  }

  static json(data: unknown, init: ResponseInit = {}): Response {
    const text = JSON.stringify(data);
    if (text === undefined) throw new TypeError('The value cannot be converted to JSON');
    const headers = new Headers(init.headers);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    return new Response(text, { ...init, headers });
  }

  /** A network error: status 0, which the constructor does not allow. */
  static error(): Response {
    const response = new Response(null);
    states.set(response, { status: 0, type: 'error', url: '', redirected: false });
    return response;
  }

  static redirect(url: string | URL, status = 302): Response {
    if (!REDIRECT_STATUSES.has(status)) throw new RangeError(`Invalid redirect status ${status}`);
    const location = new URL(String(url)).href;
    return new Response(null, { status, headers: { location } });
  }

  get [Symbol.toStringTag](): string {
    return 'Response';
  }
}

/**
 * For fetch (isolate/fetch.ts, bundled in this group): a response as it came over the network
 * from `url`; a body given with a null-body status is dropped.
 */
export function responseFromNetwork(
  body: ArrayBuffer | Uint8Array | null,
  init: ResponseInit & { url: string; redirected: boolean },
): Response {
  const status = init.status ?? 200;
  const response = new Response(NULL_BODY_STATUSES.has(status) ? null : body, init);
  states.set(response, { status, type: 'basic', url: init.url, redirected: init.redirected });
  return response;
}

export interface RequestInit {
  method?: string;
  headers?: HeadersInit;
  body?: BodyInit | null;
  signal?: AbortSignal | null;
  redirect?: string;
  credentials?: string;
  mode?: string;
  cache?: string;
  referrer?: string;
  referrerPolicy?: string;
  integrity?: string;
  keepalive?: boolean;
}

const NORMALIZED_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

function methodOf(method: unknown): string {
  const text = String(method);
  if (!TOKEN.test(text)) throw new TypeError(`"${text}" is not a valid HTTP method`);
  const upper = text.toUpperCase();
  if (FORBIDDEN_METHODS.has(upper)) throw new TypeError(`"${text}" HTTP method is unsupported`);
  return NORMALIZED_METHODS.has(upper) ? upper : text;
}

export class Request extends Body {
  readonly #url: string;
  readonly #method: string;
  readonly #headers: Headers;
  readonly #signal: AbortSignal;
  readonly #options: Required<
    Pick<
      RequestInit,
      | 'redirect'
      | 'credentials'
      | 'mode'
      | 'cache'
      | 'referrer'
      | 'referrerPolicy'
      | 'integrity'
      | 'keepalive'
    >
  >;

  constructor(input: string | URL | Request, init: RequestInit = {}) {
    const from = input instanceof Request ? input : undefined;
    const url = from ? from.url : new URL(String(input)).href;
    if (!from && /^[^:]+:\/\/[^/]*@/.test(url)) {
      throw new TypeError(`Request cannot be constructed from a URL with credentials: ${url}`);
    }
    const method = init.method !== undefined ? methodOf(init.method) : (from?.method ?? 'GET');
    const headers = new Headers(init.headers ?? from?.headers);
    const hasBody = init.body !== undefined && init.body !== null;
    if (hasBody && (method === 'GET' || method === 'HEAD')) {
      throw new TypeError('Request with GET/HEAD method cannot have body.');
    }
    const inherited = init.body === undefined && from ? from.peekBody() : null;
    super(hasBody ? bodyOf(init.body, headers) : inherited === null ? null : inherited.slice());
    this.#url = url;
    this.#method = method;
    this.#headers = headers;
    const signal = init.signal ?? from?.signal;
    if (signal !== undefined && signal !== null && !(signal instanceof AbortSignal)) {
      throw new TypeError('The signal must be an AbortSignal');
    }
    // A request's own signal follows the one given, as in browsers.
    this.#signal = signal ? AbortSignal.any([signal]) : new AbortController().signal;
    this.#options = {
      redirect: init.redirect ?? from?.redirect ?? 'follow',
      credentials: init.credentials ?? from?.credentials ?? 'same-origin',
      mode: init.mode ?? from?.mode ?? 'cors',
      cache: init.cache ?? from?.cache ?? 'default',
      referrer: init.referrer ?? from?.referrer ?? 'about:client',
      referrerPolicy: init.referrerPolicy ?? from?.referrerPolicy ?? '',
      integrity: init.integrity ?? from?.integrity ?? '',
      keepalive: init.keepalive ?? from?.keepalive ?? false,
    };
    if (!['follow', 'error', 'manual'].includes(this.#options.redirect)) {
      throw new TypeError(`Invalid redirect mode "${this.#options.redirect}"`);
    }
  }

  get url(): string {
    return this.#url;
  }

  get method(): string {
    return this.#method;
  }

  get headers(): Headers {
    return this.#headers;
  }

  get signal(): AbortSignal {
    return this.#signal;
  }

  get redirect(): string {
    return this.#options.redirect;
  }

  get credentials(): string {
    return this.#options.credentials;
  }

  get mode(): string {
    return this.#options.mode;
  }

  get cache(): string {
    return this.#options.cache;
  }

  get referrer(): string {
    return this.#options.referrer;
  }

  get referrerPolicy(): string {
    return this.#options.referrerPolicy;
  }

  get integrity(): string {
    return this.#options.integrity;
  }

  get keepalive(): boolean {
    return this.#options.keepalive;
  }

  get destination(): string {
    return '';
  }

  clone(): Request {
    return new Request(this);
  }

  get [Symbol.toStringTag](): string {
    return 'Request';
  }
}

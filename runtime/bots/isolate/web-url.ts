/**
 * URL, parsed and serialized by Node's own URL in the worker (the URL Standard, with IDNA host
 * names) through the isolate host: a bundled implementation (whatwg-url) carries Unicode tables
 * that took QuickJS 200–500 ms to load per isolate. URLSearchParams is the
 * application/x-www-form-urlencoded list, here; a URL's `searchParams` writes its query back.
 */
import type { IsolateHost } from './isolate-host.js';
import { decodeUtf8, encodeUtf8 } from './web-utf8.js';

/** A URL's parts, as the host reports them. */
interface Parts {
  href: string;
  origin: string;
  protocol: string;
  username: string;
  password: string;
  host: string;
  hostname: string;
  port: string;
  pathname: string;
  search: string;
  hash: string;
}

/** Bytes the urlencoded serializer keeps as they are. */
const KEPT = /[*\-._0-9A-Za-z]/;

function serializeComponent(text: string): string {
  let out = '';
  for (const byte of encodeUtf8(text)) {
    const char = String.fromCharCode(byte);
    if (byte === 0x20) out += '+';
    else if (byte < 0x80 && KEPT.test(char)) out += char;
    else out += `%${byte < 16 ? '0' : ''}${byte.toString(16).toUpperCase()}`;
  }
  return out;
}

function parseComponent(text: string): string {
  const source = text.replace(/\+/g, ' ');
  if (!source.includes('%')) return source;
  const bytes: number[] = [];
  for (let at = 0; at < source.length; at++) {
    const code = source.charCodeAt(at);
    if (code === 0x25 && /^[0-9A-Fa-f]{2}$/.test(source.slice(at + 1, at + 3))) {
      bytes.push(parseInt(source.slice(at + 1, at + 3), 16));
      at += 2;
    } else if (code < 0x80) {
      bytes.push(code);
    } else {
      // A non-ASCII character (or surrogate pair) as its UTF-8 bytes.
      const end = code >= 0xd800 && code <= 0xdbff ? at + 2 : at + 1;
      bytes.push(...encodeUtf8(source.slice(at, end)));
      at = end - 1;
    }
  }
  return decodeUtf8(Uint8Array.from(bytes));
}

function parseQuery(query: string): [string, string][] {
  const list: [string, string][] = [];
  for (const sequence of query.split('&')) {
    if (!sequence) continue;
    const equals = sequence.indexOf('=');
    const name = equals < 0 ? sequence : sequence.slice(0, equals);
    const value = equals < 0 ? '' : sequence.slice(equals + 1);
    list.push([parseComponent(name), parseComponent(value)]);
  }
  return list;
}

/** Strings as WebIDL's USVString: lone surrogates become U+FFFD. */
function usv(value: unknown): string {
  return String(value).replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    '\ufffd',
  );
}

export function urlGlobals(host: IsolateHost) {
  /** The parts of `input` against `base`, with `property` set to `value`; null when invalid. */
  const parse = (input: string, base?: string, property?: string, value?: string) =>
    JSON.parse(host.url(input, base, property, value)) as Parts | null;

  /** The URL a URLSearchParams writes its query to, if it is a URL's. */
  const owners = new WeakMap<URLSearchParams, URL>();
  // Each class's private state, reached by the other through these (set in static blocks).
  let replaceQuery: (params: URLSearchParams, query: string) => void;
  let setSearch: (url: URL, query: string) => void;

  class URLSearchParams {
    #list: [string, string][] = [];

    constructor(init: unknown = '') {
      if (typeof init === 'object' && init !== null) {
        if (init instanceof URLSearchParams) this.#list = init.#list.map(([k, v]) => [k, v]);
        else if (Symbol.iterator in init) {
          for (const pair of init as Iterable<Iterable<unknown>>) {
            const entry = [...pair];
            if (entry.length !== 2) throw new TypeError('Each query pair must be [name, value]');
            this.#list.push([usv(entry[0]), usv(entry[1])]);
          }
        } else {
          for (const key of Object.keys(init)) {
            this.#list.push([usv(key), usv((init as Record<string, unknown>)[key])]);
          }
        }
      } else {
        const text = usv(init);
        this.#list = parseQuery(text.startsWith('?') ? text.slice(1) : text);
      }
    }

    get size(): number {
      return this.#list.length;
    }

    append(name: string, value: string): void {
      this.#list.push([usv(name), usv(value)]);
      this.#update();
    }

    delete(name: string, value?: string): void {
      const key = usv(name);
      const only = value === undefined ? undefined : usv(value);
      this.#list = this.#list.filter(([k, v]) => k !== key || (only !== undefined && v !== only));
      this.#update();
    }

    get(name: string): string | null {
      const key = usv(name);
      return this.#list.find(([k]) => k === key)?.[1] ?? null;
    }

    getAll(name: string): string[] {
      const key = usv(name);
      return this.#list.filter(([k]) => k === key).map(([, v]) => v);
    }

    has(name: string, value?: string): boolean {
      const key = usv(name);
      const only = value === undefined ? undefined : usv(value);
      return this.#list.some(([k, v]) => k === key && (only === undefined || v === only));
    }

    set(name: string, value: string): void {
      const key = usv(name);
      const index = this.#list.findIndex(([k]) => k === key);
      if (index < 0) this.#list.push([key, usv(value)]);
      else {
        this.#list[index] = [key, usv(value)];
        this.#list = this.#list.filter(([k], at) => k !== key || at === index);
      }
      this.#update();
    }

    /** Stable, by name in UTF-16 code units. */
    sort(): void {
      this.#list = this.#list
        .map((entry, index) => ({ entry, index }))
        .sort((a, b) =>
          a.entry[0] < b.entry[0] ? -1 : a.entry[0] > b.entry[0] ? 1 : a.index - b.index,
        )
        .map(({ entry }) => entry);
      this.#update();
    }

    forEach(
      callback: (value: string, key: string, parent: URLSearchParams) => void,
      thisArg?: unknown,
    ): void {
      for (const [key, value] of this) callback.call(thisArg, value, key, this);
    }

    *entries(): IterableIterator<[string, string]> {
      for (let index = 0; index < this.#list.length; index++) {
        const [key, value] = this.#list[index];
        yield [key, value];
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

    toString(): string {
      return this.#list
        .map(([key, value]) => `${serializeComponent(key)}=${serializeComponent(value)}`)
        .join('&');
    }

    get [Symbol.toStringTag](): string {
      return 'URLSearchParams';
    }

    // For the URL whose query this is: its new query.
    static {
      replaceQuery = (params, query) => {
        params.#list = parseQuery(query);
      };
    }

    #update(): void {
      const url = owners.get(this);
      if (url) setSearch(url, this.toString());
    }
  }

  class URL {
    #parts: Parts;
    readonly #searchParams: URLSearchParams;

    constructor(url: unknown, base?: unknown) {
      const input = usv(url);
      const parts = parse(input, base === undefined ? undefined : usv(base));
      if (!parts) throw new TypeError(`Invalid URL: ${input}`);
      this.#parts = parts;
      this.#searchParams = new URLSearchParams(parts.search);
      owners.set(this.#searchParams, this);
    }

    static canParse(url: unknown, base?: unknown): boolean {
      return parse(usv(url), base === undefined ? undefined : usv(base)) !== null;
    }

    static parse(url: unknown, base?: unknown): URL | null {
      return URL.canParse(url, base) ? new URL(url, base) : null;
    }

    #set(property: keyof Parts, value: unknown): void {
      const parts = parse(this.#parts.href, undefined, property, usv(value));
      if (!parts) {
        if (property === 'href') throw new TypeError(`Invalid URL: ${usv(value)}`);
        return;
      }
      this.#parts = parts;
      if (property === 'href' || property === 'search')
        replaceQuery(this.#searchParams, parts.search.slice(1));
    }

    static {
      setSearch = (url, query) => {
        url.#set('search', query);
      };
    }

    get href(): string {
      return this.#parts.href;
    }
    set href(value: string) {
      this.#set('href', value);
    }
    get origin(): string {
      return this.#parts.origin;
    }
    get protocol(): string {
      return this.#parts.protocol;
    }
    set protocol(value: string) {
      this.#set('protocol', value);
    }
    get username(): string {
      return this.#parts.username;
    }
    set username(value: string) {
      this.#set('username', value);
    }
    get password(): string {
      return this.#parts.password;
    }
    set password(value: string) {
      this.#set('password', value);
    }
    get host(): string {
      return this.#parts.host;
    }
    set host(value: string) {
      this.#set('host', value);
    }
    get hostname(): string {
      return this.#parts.hostname;
    }
    set hostname(value: string) {
      this.#set('hostname', value);
    }
    get port(): string {
      return this.#parts.port;
    }
    set port(value: string) {
      this.#set('port', value);
    }
    get pathname(): string {
      return this.#parts.pathname;
    }
    set pathname(value: string) {
      this.#set('pathname', value);
    }
    get search(): string {
      return this.#parts.search;
    }
    set search(value: string) {
      this.#set('search', value);
    }
    get hash(): string {
      return this.#parts.hash;
    }
    set hash(value: string) {
      this.#set('hash', value);
    }
    get searchParams(): URLSearchParams {
      return this.#searchParams;
    }

    toString(): string {
      return this.#parts.href;
    }

    toJSON(): string {
      return this.#parts.href;
    }

    get [Symbol.toStringTag](): string {
      return 'URL';
    }
  }

  return { URL, URLSearchParams };
}

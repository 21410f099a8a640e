/**
 * What the isolate's web platform asks of the worker synchronously (isolate/isolate-host.ts):
 * random bytes, digests and UUIDs from node:crypto, and dates and numbers formatted by Node's
 * Intl (ICU), which QuickJS lacks. Each is bounded: a bot reaches these only through the
 * isolate's own code, which checks arguments as the platform does, but nothing here trusts it.
 */
import { createHash, randomFillSync, randomUUID } from 'node:crypto';

/**
 * Random bytes one call gives: crypto.getRandomValues (up to 65,536 bytes) asks in chunks, so
 * that each allocation a host function makes in the isolate is small: a large one failing at
 * the isolate's memory limit leaves QuickJS's host calls broken.
 */
const RANDOM_CHUNK_BYTES = 1024;
const DIGESTS: Readonly<Record<string, string>> = {
  'SHA-1': 'sha1',
  'SHA-256': 'sha256',
  'SHA-384': 'sha384',
  'SHA-512': 'sha512',
};

export function randomBytes(length: number): Uint8Array {
  if (!Number.isInteger(length) || length < 0 || length > RANDOM_CHUNK_BYTES) {
    throw new RangeError(`Random bytes are given ${RANDOM_CHUNK_BYTES} at a time`);
  }
  return randomFillSync(new Uint8Array(length));
}

export { randomUUID };

/** `algorithm` is one of Web Crypto's names; anything else is a NotSupportedError there. */
export function digest(algorithm: string, data: Uint8Array): Uint8Array {
  const name = DIGESTS[algorithm.toUpperCase()];
  if (!name) throw new Error(`Unrecognized digest algorithm: ${algorithm}`);
  return createHash(name).update(data).digest();
}

/** What a URL's setters may set. */
const URL_SETTERS = new Set([
  'href',
  'protocol',
  'username',
  'password',
  'host',
  'hostname',
  'port',
  'pathname',
  'search',
  'hash',
]);

/**
 * `input` parsed against `base` by Node's URL (the URL Standard), with `property` set to
 * `value` if given: JSON of its parts, or of null when it does not parse.
 */
export function url(input: string, base?: string, property?: string, value?: string): string {
  let parsed: URL;
  try {
    parsed = new URL(input, base);
    if (property !== undefined) {
      if (!URL_SETTERS.has(property)) throw new TypeError(`URL has no setter ${property}`);
      (parsed as unknown as Record<string, string>)[property] = value ?? '';
    }
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_INVALID_URL') return 'null';
    throw error;
  }
  const { href, origin, protocol, username, password, host, hostname, port } = parsed;
  const { pathname, search, hash } = parsed;
  return JSON.stringify({
    href,
    origin,
    protocol,
    username,
    password,
    host,
    hostname,
    port,
    pathname,
    search,
    hash,
  });
}

/** One call on a formatter: its kind, constructor arguments, method and value. */
interface IntlRequest {
  readonly kind: 'DateTimeFormat' | 'NumberFormat';
  readonly locales?: string | string[];
  readonly options?: Record<string, unknown>;
  readonly method: 'format' | 'formatToParts' | 'resolvedOptions';
  /** A date as its time value, or a number. */
  readonly value?: number;
}

type Formatter = Intl.DateTimeFormat | Intl.NumberFormat;

/** Formatters by their arguments: making one costs far more than using it. */
const formatters = new Map<string, Formatter>();
const MAX_FORMATTERS = 64;

/**
 * `request` (JSON of an IntlRequest) run on Node's Intl: the JSON of its result. Intl's own
 * errors (a bad locale or option, an invalid date) are thrown as they are.
 */
export function intl(requestJson: string): string {
  const request = JSON.parse(requestJson) as IntlRequest;
  const formatter = formatterOf(request);
  switch (request.method) {
    case 'format':
      return JSON.stringify(formatter.format(request.value as number));
    case 'formatToParts':
      return JSON.stringify(formatter.formatToParts(request.value as number));
    case 'resolvedOptions':
      return JSON.stringify(formatter.resolvedOptions());
    default:
      throw new TypeError(`Unknown Intl method ${String(request.method)}`);
  }
}

function formatterOf({ kind, locales, options }: IntlRequest): Formatter {
  const key = JSON.stringify([kind, locales, options]);
  let formatter = formatters.get(key);
  if (!formatter) {
    if (kind === 'DateTimeFormat') formatter = new Intl.DateTimeFormat(locales, options);
    else if (kind === 'NumberFormat') formatter = new Intl.NumberFormat(locales, options);
    else throw new TypeError(`Unknown Intl formatter ${String(kind)}`);
    if (formatters.size >= MAX_FORMATTERS) formatters.delete(formatters.keys().next().value!);
    formatters.set(key, formatter);
  }
  return formatter;
}

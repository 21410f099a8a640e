/**
 * TextEncoder and TextDecoder (UTF-8, as the Encoding Standard; other encodings are a
 * RangeError, as for an unknown label), atob and btoa (forgiving base64, as the HTML Standard).
 */
import { decodeUtf8, encodeUtf8, incompleteTail } from './web-utf8.js';

export class TextEncoder {
  get encoding(): string {
    return 'utf-8';
  }

  encode(input = ''): Uint8Array {
    return encodeUtf8(String(input));
  }

  encodeInto(source: string, destination: Uint8Array): { read: number; written: number } {
    if (!(destination instanceof Uint8Array)) {
      throw new TypeError('The destination must be a Uint8Array');
    }
    const text = String(source);
    let read = 0;
    let written = 0;
    for (const char of text) {
      const bytes = encodeUtf8(char);
      if (written + bytes.length > destination.length) break;
      destination.set(bytes, written);
      written += bytes.length;
      read += char.length;
    }
    return { read, written };
  }

  get [Symbol.toStringTag](): string {
    return 'TextEncoder';
  }
}

const UTF8_LABELS = new Set([
  'unicode-1-1-utf-8',
  'unicode11utf8',
  'unicode20utf8',
  'utf-8',
  'utf8',
  'x-unicode20utf8',
]);

export class TextDecoder {
  readonly #fatal: boolean;
  readonly #ignoreBOM: boolean;
  /** Bytes of a sequence that the next chunk of a stream completes. */
  #pending = new Uint8Array(0);
  #bomSeen = false;

  constructor(label = 'utf-8', options: { fatal?: boolean; ignoreBOM?: boolean } = {}) {
    const name = String(label).trim().toLowerCase();
    if (!UTF8_LABELS.has(name)) {
      throw new RangeError(`The "${String(label)}" encoding is not supported in the bot sandbox`);
    }
    this.#fatal = Boolean(options?.fatal);
    this.#ignoreBOM = Boolean(options?.ignoreBOM);
  }

  get encoding(): string {
    return 'utf-8';
  }

  get fatal(): boolean {
    return this.#fatal;
  }

  get ignoreBOM(): boolean {
    return this.#ignoreBOM;
  }

  decode(input?: ArrayBuffer | ArrayBufferView, options: { stream?: boolean } = {}): string {
    let bytes: Uint8Array;
    if (input === undefined || input === null) bytes = new Uint8Array(0);
    else if (input instanceof ArrayBuffer) bytes = new Uint8Array(input);
    else if (ArrayBuffer.isView(input)) {
      bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    } else throw new TypeError('The input must be an ArrayBuffer or an ArrayBufferView');
    if (this.#pending.length) {
      const joined = new Uint8Array(this.#pending.length + bytes.length);
      joined.set(this.#pending);
      joined.set(bytes, this.#pending.length);
      bytes = joined;
    }
    const stream = Boolean(options?.stream);
    const kept = stream ? incompleteTail(bytes) : 0;
    this.#pending = bytes.slice(bytes.length - kept);
    let text = decodeUtf8(kept ? bytes.subarray(0, bytes.length - kept) : bytes, this.#fatal);
    if (!this.#bomSeen && text.length) {
      if (!this.#ignoreBOM && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.#bomSeen = true;
    }
    if (!stream) this.#bomSeen = false;
    return text;
  }

  get [Symbol.toStringTag](): string {
    return 'TextDecoder';
  }
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function invalidCharacter(message: string): Error {
  const type = (globalThis as { DOMException?: new (message: string, name: string) => Error })
    .DOMException;
  return type ? new type(message, 'InvalidCharacterError') : new TypeError(message);
}

/** Each character of `data` (all at most U+00FF) as a byte, in base64. */
export function btoa(data: unknown): string {
  if (arguments.length === 0) throw new TypeError('btoa needs an argument');
  const text = String(data);
  let out = '';
  for (let at = 0; at < text.length; at += 3) {
    const a = text.charCodeAt(at);
    const b = at + 1 < text.length ? text.charCodeAt(at + 1) : 0;
    const c = at + 2 < text.length ? text.charCodeAt(at + 2) : 0;
    if (a > 0xff || b > 0xff || c > 0xff) {
      throw invalidCharacter('Invalid character: btoa takes characters up to U+00FF only');
    }
    const bits = (a << 16) | (b << 8) | c;
    out += BASE64[bits >> 18] + BASE64[(bits >> 12) & 63];
    out += at + 1 < text.length ? BASE64[(bits >> 6) & 63] : '=';
    out += at + 2 < text.length ? BASE64[bits & 63] : '=';
  }
  return out;
}

/** Forgiving base64 (whitespace skipped, padding optional) to a string of bytes. */
export function atob(data: unknown): string {
  if (arguments.length === 0) throw new TypeError('atob needs an argument');
  let text = String(data).replace(/[\t\n\f\r ]/g, '');
  if (text.length % 4 === 0) text = text.replace(/==?$/, '');
  if (text.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(text)) {
    throw invalidCharacter('The string to be decoded is not correctly encoded.');
  }
  let out = '';
  let bits = 0;
  let count = 0;
  for (let at = 0; at < text.length; at++) {
    bits = (bits << 6) | BASE64.indexOf(text[at]);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += String.fromCharCode((bits >> count) & 0xff);
    }
  }
  return out;
}

/**
 * The `fhir` client's `createBinary` and `download` (a part of the client: fhir-core.ts), and the
 * binary content between the bot and the host: what `createBinary` may be given (a string, an
 * ArrayBuffer or typed array, a Blob) as base64 text, and what `download` answers as a Blob.
 * Base64 is written out here: the isolate may have neither `btoa` nor `Buffer`.
 */
import type { FhirCore, Methods } from './fhir-core.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

export function binaryMethods({ call, local }: FhirCore): Methods {
  return {
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
  };
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

/** What the host stores: the content as base64. */
async function base64Of(data: unknown): Promise<string> {
  if (typeof data === 'string') return encodeBase64(utf8Bytes(data));
  if (data instanceof ArrayBuffer) return encodeBase64(new Uint8Array(data));
  if (ArrayBuffer.isView(data))
    return encodeBase64(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  const blob = data as { arrayBuffer?: () => Promise<ArrayBuffer> } | null;
  if (blob && typeof blob.arrayBuffer === 'function')
    return encodeBase64(new Uint8Array(await blob.arrayBuffer()));
  throw new TypeError('Binary data must be a string, an ArrayBuffer, a typed array or a Blob');
}

/** A Blob of `contentType` holding the base64 `data`: the global Blob is needed. */
function blobOf(data: string, contentType: string): unknown {
  const BlobType = (globalThis as { Blob?: new (parts: unknown[], options: object) => unknown })
    .Blob;
  if (typeof BlobType !== 'function') throw new TypeError('download needs the global Blob');
  return new BlobType([decodeBase64(data)], { type: contentType });
}

function utf8Bytes(text: string): Uint8Array {
  // encodeURIComponent writes UTF-8 as %XX escapes; lone surrogates throw, as TextEncoder would not.
  const escaped = unescape(encodeURIComponent(text));
  const bytes = new Uint8Array(escaped.length);
  for (let i = 0; i < escaped.length; i++) bytes[i] = escaped.charCodeAt(i);
  return bytes;
}

function encodeBase64(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += ALPHABET[(n >> 18) & 63] + ALPHABET[(n >> 12) & 63];
    out += i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.length ? ALPHABET[n & 63] : '=';
  }
  return out;
}

function decodeBase64(text: string): Uint8Array {
  const clean = text.replace(/[^A-Za-z0-9+/]/g, '');
  const bytes = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let n = 0;
  let bits = 0;
  let at = 0;
  for (const char of clean) {
    n = (n << 6) | ALPHABET.indexOf(char);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[at++] = (n >> bits) & 255;
    }
  }
  return bytes.subarray(0, at);
}

/**
 * `crypto` as Web Crypto defines it, for what bots use: getRandomValues, randomUUID and
 * subtle.digest (SHA-1, SHA-256, SHA-384, SHA-512), on node:crypto in the worker
 * (isolate/isolate-host.ts). Errors are DOMExceptions, read from the global when thrown.
 */
import type { IsolateHost } from './isolate-host.js';

const MAX_RANDOM_BYTES = 65_536;
/** What the host gives a call (sandbox-natives.ts RANDOM_CHUNK_BYTES). */
const RANDOM_CHUNK_BYTES = 1024;
const INTEGER_ARRAYS = [
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'BigInt64Array',
  'BigUint64Array',
];

function domException(message: string, name: string): Error {
  const type = (globalThis as { DOMException?: new (message: string, name: string) => Error })
    .DOMException;
  if (type) return new type(message, name);
  return Object.assign(new Error(message), { name });
}

function tagOf(value: unknown): string {
  return Object.prototype.toString.call(value).slice(8, -1);
}

/** A copy of a BufferSource's bytes, as the ArrayBuffer the host takes. */
function bufferOf(data: unknown): ArrayBuffer {
  if (data instanceof ArrayBuffer) return data.slice(0);
  if (ArrayBuffer.isView(data)) {
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice().buffer;
  }
  throw new TypeError('The data must be an ArrayBuffer or an ArrayBufferView');
}

export function cryptoGlobals(host: IsolateHost) {
  const subtle = {
    async digest(algorithm: string | { name: string }, data: unknown): Promise<ArrayBuffer> {
      const name = typeof algorithm === 'object' && algorithm !== null ? algorithm.name : algorithm;
      const bytes = bufferOf(data);
      if (!/^SHA-(1|256|384|512)$/i.test(String(name))) {
        throw domException(`Unrecognized algorithm name: ${String(name)}`, 'NotSupportedError');
      }
      return host.digest(String(name), bytes);
    },
  };
  const crypto = {
    subtle: Object.freeze(subtle),
    getRandomValues<T extends ArrayBufferView>(array: T): T {
      if (!ArrayBuffer.isView(array) || !INTEGER_ARRAYS.includes(tagOf(array))) {
        throw domException('The data must be an integer-type TypedArray', 'TypeMismatchError');
      }
      if (array.byteLength > MAX_RANDOM_BYTES) {
        throw domException(
          `The ArrayBufferView's byte length (${array.byteLength}) exceeds the number of bytes of entropy available via this API (${MAX_RANDOM_BYTES})`,
          'QuotaExceededError',
        );
      }
      const target = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      for (let at = 0; at < target.length; at += RANDOM_CHUNK_BYTES) {
        const length = Math.min(RANDOM_CHUNK_BYTES, target.length - at);
        target.set(new Uint8Array(host.randomBytes(length)), at);
      }
      return array;
    },
    randomUUID: (): string => host.randomUUID(),
  };
  return { crypto: Object.freeze(crypto) };
}

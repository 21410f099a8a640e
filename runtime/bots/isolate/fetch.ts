/**
 * The bot's `fetch(input, init)`: the request is made with the isolate's own Request (so it is
 * checked as a browser checks it), sent to the main thread as one host call (bot-fetch.ts runs it
 * with Node's fetch under the egress policy), and its reply made into a Response. Bundled in the
 * fetch classes' group (web-fetch.ts) so that what it returns is an instance of the global
 * Response.
 *
 * Bodies cross as binary strings, one character per byte: JSON carries them, and turning one
 * into bytes is a loop of charCodeAt, cheaper in QuickJS than decoding base64 or re-encoding text.
 */
import type { IsolateHost } from './isolate-host.js';
import { Request, responseFromNetwork, type RequestInit } from './web-fetch-classes.js';

/** The host call's argument; bot-fetch.ts reads it. */
export interface FetchCall {
  readonly url: string;
  readonly method: string;
  readonly headers: readonly (readonly [string, string])[];
  /** Absent for a request without a body. */
  readonly body?: string;
  readonly redirect: string;
}

/** The host call's value. */
export interface FetchReply {
  readonly status: number;
  readonly statusText: string;
  readonly headers: [string, string][];
  readonly url: string;
  readonly redirected: boolean;
  readonly body: string;
}

export function createFetch(host: IsolateHost) {
  return async function fetch(input: string | URL | Request, init?: RequestInit) {
    const request = new Request(input, init);
    const { signal } = request;
    signal.throwIfAborted();
    const bytes = new Uint8Array(await request.arrayBuffer());
    // A request without a body reads as empty bytes and stays unused.
    const call: FetchCall = {
      url: request.url,
      method: request.method,
      headers: [...request.headers],
      ...(request.bodyUsed ? { body: binaryString(bytes) } : {}),
      redirect: request.redirect,
    };
    const reply = await new Promise<FetchReply>((resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      host.call('fetch', call).then(
        (value) => resolve(value as FetchReply),
        // A network error, as browsers and Node report one: the reason is its cause.
        (error: Error) =>
          reject(new TypeError('fetch failed', { cause: new Error(error.message) })),
      );
    });
    return responseFromNetwork(bytesOf(reply.body), reply);
  };
}

function binaryString(bytes: Uint8Array): string {
  const parts: string[] = [];
  // fromCharCode takes its arguments on the stack: a bounded number at a time.
  for (let at = 0; at < bytes.length; at += 8192)
    parts.push(String.fromCharCode(...bytes.subarray(at, at + 8192)));
  return parts.join('');
}

function bytesOf(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let at = 0; at < text.length; at++) bytes[at] = text.charCodeAt(at);
  return bytes;
}

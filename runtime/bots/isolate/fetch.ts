/**
 * The bot's `fetch(input, init)`: the request is made with the isolate's own Request (so it is
 * checked as a browser checks it), sent to the main thread as one host call (bot-fetch.ts runs it
 * with Node's fetch under the egress policy), and its reply made into a Response. Bundled in the
 * fetch classes' group (web-fetch.ts) so that what it returns is an instance of the global
 * Response.
 *
 * Bodies cross as base64, which the worker turns into bytes and back natively (isolate-host.ts):
 * a third larger, whatever the bytes, where JSON would write a NUL as six characters.
 */
import { nativesOf, type IsolateHost } from './isolate-host.js';
import { Request, responseFromNetwork, type RequestInit } from './web-fetch-classes.js';

/** The host call's argument; bot-fetch.ts reads it. */
export interface FetchCall {
  readonly url: string;
  readonly method: string;
  readonly headers: readonly (readonly [string, string])[];
  /** Base64; absent for a request without a body. */
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
  /** Base64. */
  readonly body: string;
}

export function createFetch(host: IsolateHost) {
  const natives = nativesOf(host);
  return async function fetch(input: string | URL | Request, init?: RequestInit) {
    const request = new Request(input, init);
    const { signal } = request;
    signal.throwIfAborted();
    const bytes = await request.arrayBuffer();
    // A request without a body reads as empty bytes and stays unused.
    const call: FetchCall = {
      url: request.url,
      method: request.method,
      headers: [...request.headers],
      ...(request.bodyUsed ? { body: natives.bytesToBase64(bytes) } : {}),
      redirect: request.redirect,
    };
    const reply = await new Promise<FetchReply>((resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      host.call('fetch', call).then(
        (value) => resolve(value as FetchReply),
        // The main thread's failure is a network error, as browsers and Node report one, with
        // the reason as its cause; anything else (memory ran out taking the reply) as it is.
        (error: Error) =>
          reject(
            error.name === 'Error'
              ? new TypeError('fetch failed', { cause: new Error(error.message) })
              : error,
          ),
      );
    });
    return responseFromNetwork(natives.base64ToBytes(reply.body), reply);
  };
}

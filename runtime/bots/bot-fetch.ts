/**
 * A bot's `fetch`, on the main thread: one execution's requests, sent with the server's egress
 * client (runtime/egress/), so that they connect only where GRAPHIR_EGRESS_ALLOW allows. When
 * the execution ends (its deadline among the ways) those still running are cut off; a response
 * body larger than the execution may hold is refused before it crosses to the sandbox; and each
 * request is logged for the execution's AuditEvent. How many run at once is the sandbox's host
 * call queue's business (sandbox-host-calls.ts), as for `fhir` calls.
 */
import type { EgressClient } from '../egress/egress-client.js';
import type { FetchCall, FetchReply } from './isolate/fetch.js';
import type { SandboxHost } from './sandbox-types.js';

/** The largest response body a bot may read, whatever its memory. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
/** Requests listed in the AuditEvent; a bot that sends more gets a count of the rest. */
const LOGGED_REQUESTS = 100;

/** The largest response body an execution with `memoryBytes` may read: a quarter of it. */
export function bodyLimit(memoryBytes: number): number {
  return Math.min(MAX_BODY_BYTES, Math.floor(memoryBytes / 4));
}

/** What the AuditEvent says of one request. */
interface LoggedRequest {
  readonly method: string;
  readonly host: string;
  readonly started: number;
  /** Set once it is answered (its status), fails or is cut off, with why. */
  outcome?: string;
  reason?: string;
  durationMs?: number;
}

export class BotFetch {
  private readonly requests: LoggedRequest[] = [];
  private unlogged = 0;
  /**
   * Aborts every request when the execution ends. Its deadline is the sandbox's: a timer here
   * would race it, and could fail a bot's fetch just before the bot is stopped for its time.
   * Made by the first request: most executions fetch nothing, and an abort makes a DOMException.
   */
  private ended: AbortController | undefined;
  private over = false;

  constructor(
    private readonly client: EgressClient,
    private readonly maxBodyBytes: number,
  ) {}

  private signal(): AbortSignal {
    this.ended ??= new AbortController();
    if (this.over) this.ended.abort();
    return this.ended.signal;
  }

  /** Runs `fetch` host calls here, the rest on `host`. */
  host(host: SandboxHost): SandboxHost {
    return (method, args) => (method === 'fetch' ? this.fetch(args[0]) : host(method, args));
  }

  /** One request; rejects with the reason it failed, which the bot's fetch gives as the cause. */
  async fetch(argument: unknown): Promise<FetchReply> {
    const call = fetchCall(argument);
    const url = new URL(call.url);
    const logged: LoggedRequest = {
      method: call.method,
      host: url.host,
      started: performance.now(),
    };
    if (this.requests.length < LOGGED_REQUESTS) this.requests.push(logged);
    else this.unlogged++;
    try {
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        throw new Error(`fetch sends http and https requests only, not ${url.protocol}`);
      const response = await this.client.fetch(url, {
        method: call.method,
        headers: call.headers as [string, string][],
        ...(call.body === undefined ? {} : { body: Buffer.from(call.body, 'base64') }),
        redirect: call.redirect as RequestInit['redirect'],
        signal: this.signal(),
      });
      const body = await this.readBody(response, call.method);
      finish(logged, String(response.status));
      return {
        status: response.status,
        statusText: response.statusText,
        headers: [...response.headers],
        url: response.url,
        redirected: response.redirected,
        body: body.toString('base64'),
      };
    } catch (error) {
      const reason = reasonOf(error);
      finish(logged, 'failed', reason);
      throw new Error(reason);
    }
  }

  /** The execution is over: requests still running are cut off. */
  end(): void {
    for (const request of this.requests) finish(request, 'cut off', 'the bot ended');
    this.over = true;
    this.ended?.abort();
  }

  /**
   * Each request as `GET api.example.org 200 35 ms`, or `… failed 2 ms: why`, in the order they
   * were sent.
   */
  log(): string[] {
    const lines = this.requests.map(
      ({ method, host, outcome, reason, durationMs }) =>
        `${method} ${host} ${outcome} ${Math.round(durationMs!)} ms${reason ? `: ${reason}` : ''}`,
    );
    if (this.unlogged) lines.push(`and ${this.unlogged} more requests`);
    return lines;
  }

  /** The body's bytes, refused past the limit (before reading, when Content-Length says so). */
  private async readBody(response: Response, method: string): Promise<Buffer> {
    const limit = this.maxBodyBytes;
    const tooLarge = () =>
      new Error(
        `The response to ${method} ${response.url} is larger than the ${limit} bytes a bot may read (a quarter of its memory, at most ${MAX_BODY_BYTES})`,
      );
    const declared = Number(response.headers.get('content-length'));
    if (declared > limit) {
      await response.body?.cancel();
      throw tooLarge();
    }
    const chunks: Uint8Array[] = [];
    let length = 0;
    for await (const chunk of response.body ?? []) {
      length += chunk.byteLength;
      if (length > limit) throw tooLarge();
      chunks.push(chunk);
    }
    return Buffer.concat(chunks, length);
  }
}

/** Records how `request` ended, unless it already has. */
function finish(request: LoggedRequest, outcome: string, reason?: string): void {
  if (request.outcome !== undefined) return;
  request.outcome = outcome;
  request.reason = reason;
  request.durationMs = performance.now() - request.started;
}

/** The argument isolate/fetch.ts sends, checked: nothing else calls `fetch`, but cheaply sure. */
function fetchCall(argument: unknown): FetchCall {
  const call = argument as FetchCall;
  const valid =
    typeof call === 'object' &&
    call !== null &&
    typeof call.url === 'string' &&
    typeof call.method === 'string' &&
    Array.isArray(call.headers) &&
    call.headers.every(
      (pair) =>
        Array.isArray(pair) && pair.length === 2 && pair.every((s) => typeof s === 'string'),
    ) &&
    (call.body === undefined || typeof call.body === 'string') &&
    typeof call.redirect === 'string';
  if (!valid) throw new TypeError('fetch was called with a malformed request');
  return call;
}

/**
 * Why a request failed, as the bot is told and the AuditEvent says: Node's fetch rejects with
 * TypeError('fetch failed') whose cause is the reason (a refused address, a refused connection).
 */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof Error) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

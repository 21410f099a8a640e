/**
 * Calls to the server's FHIR API with the session's token. A 401 means the token expired or was
 * revoked: the app is told (`onUnauthorized`) so that it asks to sign in again. Other failures
 * throw a FhirRequestError holding the answer's OperationOutcome, for the page to show where it
 * points.
 */
import type { OperationOutcome } from './outcome.js';

export const FHIR_BASE = '/fhir/R4';

export interface FhirAnswer<T = unknown> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
}

export class FhirRequestError extends Error {
  constructor(
    readonly status: number,
    readonly outcome: OperationOutcome | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  readonly method?: string;
  /** JSON is sent as `application/fhir+json`; a string as it is with `contentType`. */
  readonly body?: unknown;
  readonly contentType?: string;
  readonly headers?: Record<string, string>;
}

export class FhirClient {
  constructor(
    private readonly token: string,
    private readonly onUnauthorized: () => void,
  ) {}

  /**
   * `path` is under the FHIR base (`Patient?name=x`, '' for the base), or a URL the server gave
   * (a Bundle's next link); answers of any status but 401 come back.
   */
  async send(path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.token}`,
      Accept: 'application/fhir+json, application/json;q=0.9, */*;q=0.1',
      ...options.headers,
    };
    let body: string | undefined;
    if (options.body !== undefined) {
      const raw = typeof options.body === 'string';
      body = raw ? (options.body as string) : JSON.stringify(options.body);
      headers['Content-Type'] = options.contentType ?? 'application/fhir+json';
    }
    const response = await fetch(addressOf(path), {
      method: options.method ?? 'GET',
      headers,
      body,
      // Reads answer with Last-Modified and no Cache-Control, which a browser may keep for a
      // while by its own reckoning: a page read right after a save would show the old version.
      // Every answer is asked of the server (a 304 when unchanged).
      cache: 'no-cache',
    });
    if (response.status === 401) {
      this.onUnauthorized();
      throw new FhirRequestError(401, undefined, 'Your session has ended: sign in again.');
    }
    return response;
  }

  /** A JSON answer; throws FhirRequestError unless it is 2xx. */
  async json<T>(path: string, options: RequestOptions = {}): Promise<FhirAnswer<T>> {
    const response = await this.send(path, options);
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    if (!response.ok) throw failure(response.status, body);
    return { status: response.status, headers: response.headers, body: body as T };
  }
}

/**
 * Where a request goes: always this origin, so the token never leaves it, even should a link in
 * an answer name another host.
 */
function addressOf(path: string): string {
  if (/^https?:\/\//.test(path)) {
    const url = new URL(path);
    return `${url.pathname}${url.search}`;
  }
  return path ? `${FHIR_BASE}/${path}` : FHIR_BASE;
}

export function failure(status: number, body: unknown): FhirRequestError {
  const outcome = isOutcome(body) ? body : undefined;
  const message =
    outcome?.issue
      .map((issue) => issue.diagnostics ?? issue.details?.text ?? issue.code)
      .filter(Boolean)
      .join('; ') || `The server answered ${status}.`;
  return new FhirRequestError(status, outcome, message);
}

function isOutcome(body: unknown): body is OperationOutcome {
  return (
    typeof body === 'object' &&
    body !== null &&
    (body as { resourceType?: unknown }).resourceType === 'OperationOutcome' &&
    Array.isArray((body as { issue?: unknown }).issue)
  );
}

/** The GraphQL playground: a browser's GET of `$graphql` (runtime/http/playground-routes.ts). */
export const PLAYGROUND_HREF = `${FHIR_BASE}/$graphql`;

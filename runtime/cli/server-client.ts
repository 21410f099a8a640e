/**
 * The HTTP bits the `graphir` command needs: a token by client credentials, then FHIR and admin
 * requests with it. Every failure becomes a `CliError` whose message is one line.
 */
import { FHIR_BASE } from '../model/fhir-base.js';

/** A failure the CLI reports as one line on stderr, without a stack trace. */
export class CliError extends Error {
  constructor(message: string) {
    super(oneLine(message));
    this.name = 'CliError';
  }
}

export interface Connection {
  readonly url: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly scope?: string;
}

export interface Reply {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

/** `POST /oauth2/token` with client credentials; the access token. */
export async function fetchToken(connection: Connection): Promise<string> {
  if (!connection.clientId || !connection.clientSecret)
    throw new CliError(
      'client credentials missing: pass --client-id and --client-secret (or set GRAPHIR_CLIENT_ID and GRAPHIR_CLIENT_SECRET)',
    );
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: connection.clientId,
    client_secret: connection.clientSecret,
    ...(connection.scope ? { scope: connection.scope } : {}),
  });
  const reply = await send(`${serverRoot(connection.url)}/oauth2/token`, {
    method: 'POST',
    body,
  });
  const json = parseJson(reply.text) as { access_token?: string } | undefined;
  if (reply.status !== 200 || !json?.access_token)
    throw new CliError(`token refused by ${connection.url}: ${describeFailure(reply)}`);
  return json.access_token;
}

/** An authenticated client of one server; fetches a new token once when the old one expires. */
export class ServerClient {
  private constructor(
    private readonly connection: Connection,
    private token: string,
  ) {}

  static async connect(connection: Connection): Promise<ServerClient> {
    return new ServerClient(connection, await fetchToken(connection));
  }

  get root(): string {
    return serverRoot(this.connection.url);
  }

  /** A request relative to the FHIR base (`Patient?name=x`, `` for the system level). */
  fhir(
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const url = `${this.root}${FHIR_BASE}${path ? `/${path.replace(/^\//, '')}` : ''}`;
    return this.request(url, method, body, { 'Content-Type': 'application/fhir+json', ...headers });
  }

  /** Like `fhir`, but a non-2xx answer throws; the body parsed as JSON. */
  async fhirJson(method: string, path: string, body?: unknown): Promise<any> {
    const reply = await this.fhir(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
    );
    return okJson(reply, `${method} ${path || '/'}`);
  }

  /** A JSON request relative to the server root (the admin API); non-2xx throws. */
  async adminJson(method: string, path: string, body?: unknown): Promise<any> {
    const reply = await this.request(
      `${this.root}${path}`,
      method,
      body === undefined ? undefined : JSON.stringify(body),
      { 'Content-Type': 'application/json' },
    );
    return okJson(reply, `${method} ${path}`);
  }

  private async request(
    url: string,
    method: string,
    body: string | undefined,
    headers: Record<string, string>,
  ): Promise<Reply> {
    const attempt = () =>
      send(url, {
        method,
        headers: {
          Accept: 'application/fhir+json, application/json;q=0.9, */*;q=0.8',
          Authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : headers),
        },
        body,
      });
    let reply = await attempt();
    if (reply.status === 401) {
      this.token = await fetchToken(this.connection);
      reply = await attempt();
    }
    return reply;
  }
}

/** The server's root URL, whether the user gave it or its FHIR base. */
export function serverRoot(url: string): string {
  return url.replace(/(?<!\/)\/+$/, '').replace(/\/fhir\/R4$/, '');
}

export function isOk(reply: Reply): boolean {
  return reply.status >= 200 && reply.status < 300;
}

/** `HTTP 404: Bot/x not found` from an OperationOutcome, an OAuth error or plain text. */
export function describeFailure(reply: Reply): string {
  const json = parseJson(reply.text) as Record<string, any> | undefined;
  let detail = '';
  if (json?.resourceType === 'OperationOutcome' && Array.isArray(json.issue)) {
    detail = json.issue
      .map((issue: any) => issue.diagnostics ?? issue.details?.text ?? issue.code)
      .filter(Boolean)
      .join('; ');
  } else if (typeof json?.error === 'string') {
    detail = json.error_description ? `${json.error}: ${json.error_description}` : json.error;
  } else if (Array.isArray(json?.errors)) {
    detail = json.errors.map((error: any) => error.message).join('; ');
  } else {
    detail = reply.text.slice(0, 300);
  }
  return oneLine(`HTTP ${reply.status}${detail ? `: ${detail}` : ''}`);
}

function okJson(reply: Reply, what: string): unknown {
  if (!isOk(reply)) throw new CliError(`${what} failed: ${describeFailure(reply)}`);
  const json = parseJson(reply.text);
  if (json === undefined && reply.text.trim())
    throw new CliError(`${what}: the server answered with something other than JSON`);
  return json;
}

async function send(url: string, init: RequestInit): Promise<Reply> {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    throw new CliError(`not a valid server URL: ${url}`);
  }
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new CliError(`cannot reach ${origin}: ${reason}`);
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    text: await response.text(),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function oneLine(text: string): string {
  return text.replace(/(?<!\s)\s*[\r\n]\s*/g, ' ').trim();
}

/**
 * Clients each held to one process of a server that runs several on one port
 * (`graphir serve --processes N`): each keeps one keep-alive connection, which stays with the
 * process the supervisor handed it to; `GET /healthz` says which one that is. Tests of what one
 * process does and another sees (tokens, caches, bots, jobs) run through them.
 */
import { Agent, fetch } from 'undici';
import type { FhirResponse, RequestInit } from './test-server.js';

export interface PinnedClient {
  /** The process every request of this client reaches. */
  readonly pid: number;
  /** fetch relative to the FHIR base, with FHIR JSON bodies and the token given (or `init.token`). */
  fhir(path: string, init?: RequestInit): Promise<FhirResponse>;
  /** fetch relative to the server root, JSON bodies. */
  call(path: string, init?: RequestInit): Promise<FhirResponse>;
  close(): Promise<void>;
}

/** Connections the supervisor hands out in turn: this many tries find every process of a few. */
const TRIES = 40;

/** One client per process, `count` processes in all; fails when fewer answer. */
export async function pinnedClients(
  url: string,
  count: number,
  token?: string,
): Promise<PinnedClient[]> {
  const clients = new Map<number, PinnedClient>();
  for (let tried = 0; tried < TRIES && clients.size < count; tried++) {
    const client = await pinnedClient(url, token);
    if (clients.has(client.pid)) await client.close();
    else clients.set(client.pid, client);
  }
  if (clients.size < count) {
    await Promise.all([...clients.values()].map((client) => client.close()));
    throw new Error(`${clients.size} of ${count} processes answered in ${TRIES} connections`);
  }
  return [...clients.values()];
}

async function pinnedClient(url: string, token: string | undefined): Promise<PinnedClient> {
  const agent = new Agent({ connections: 1, pipelining: 1 });
  const send = (target: string, init: RequestInit, contentType: string) => {
    const bearer = init.token === undefined ? token : init.token;
    return fetch(target, {
      dispatcher: agent,
      method: init.method ?? 'GET',
      headers: {
        ...(init.body === undefined ? {} : { 'Content-Type': contentType }),
        ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
        ...init.headers,
      },
      body:
        init.body === undefined || typeof init.body === 'string'
          ? (init.body as string | undefined)
          : JSON.stringify(init.body),
    }) as unknown as Promise<FhirResponse>;
  };
  const health = await send(`${url}/healthz`, {}, 'application/json');
  const { pid } = (await health.json()) as { pid: number };
  return {
    pid,
    fhir: (path, init = {}) => send(`${url}/fhir/R4${path}`, init, 'application/fhir+json'),
    call: (path, init = {}) => send(`${url}${path}`, init, 'application/json'),
    close: () => agent.close(),
  };
}

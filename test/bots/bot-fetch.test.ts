/**
 * A bot's `fetch` over HTTP `$execute`, against an HTTP server of the test's own on loopback:
 * one Graphir server whose GRAPHIR_EGRESS_ALLOW allows 127.0.0.1, and one with the default
 * policy, which must refuse loopback, link-local and metadata addresses without connecting.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** The loopback server the bots fetch from, with what it saw. */
interface Upstream {
  readonly url: string;
  /** Requests it answered, by path. */
  readonly seen: string[];
  /** The most requests it held at once on /held. */
  maxHeld: number;
  close(): void;
}

async function startUpstream(): Promise<Upstream> {
  let held = 0;
  const state = { maxHeld: 0 };
  const seen: string[] = [];
  const routes: Record<string, (request: IncomingMessage, response: ServerResponse) => void> = {
    '/json': (_request, response) =>
      response
        .writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' })
        .end('{"hello":"wörld"}'),
    '/echo': async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      response.writeHead(201, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          method: request.method,
          contentType: request.headers['content-type'] ?? null,
          custom: request.headers['x-custom'] ?? null,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    },
    '/teapot': (_request, response) =>
      response.writeHead(418, "I'm a teapot", { 'set-cookie': ['a=1', 'b=2'] }).end('short'),
    '/binary': (_request, response) =>
      response
        .writeHead(200, { 'content-type': 'application/octet-stream' })
        .end(Buffer.from(Array.from({ length: 256 }, (_, byte) => byte))),
    '/big': (request, response) => {
      const bytes = Number(new URL(request.url!, 'http://x').searchParams.get('bytes'));
      // Chunked, without Content-Length: the limit is found while reading.
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      for (let sent = 0; sent < bytes; sent += chunk.length)
        response.write(chunk.subarray(0, Math.min(chunk.length, bytes - sent)));
      response.end();
    },
    '/zeros': (request, response) => {
      const bytes = Number(new URL(request.url!, 'http://x').searchParams.get('bytes'));
      response
        .writeHead(200, { 'content-type': 'application/octet-stream' })
        .end(Buffer.alloc(bytes));
    },
    '/declared': (_request, response) =>
      response.writeHead(200, { 'content-length': String(64 * 1024 * 1024) }).flushHeaders(),
    '/held': (_request, response) => {
      held++;
      state.maxHeld = Math.max(state.maxHeld, held);
      setTimeout(() => {
        held--;
        response.end('done');
      }, 100);
    },
    // Never answers: the bot's deadline must end the wait.
    '/slow': () => {},
    '/redirect': (request, response) => {
      const to = new URL(request.url!, 'http://x').searchParams.get('to')!;
      response.writeHead(302, { location: to }).end();
    },
  };
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url!, 'http://x').pathname;
    seen.push(path);
    const route = routes[path];
    if (route) void route(request, response);
    else response.writeHead(404).end('not found');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    get maxHeld() {
      return state.maxHeld;
    },
    set maxHeld(value) {
      state.maxHeld = value;
    },
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** A bot that returns what its body (of `handler(fhir, event)`) returns; `event.input` is JSON. */
async function execute(server: TestServer, body: string, input: object = {}, extra: object = {}) {
  const created = await server.fhir('/Bot', {
    method: 'POST',
    body: {
      resourceType: 'Bot',
      name: 'fetcher',
      code: `export async function handler(fhir, event) { ${body} }`,
      ...extra,
    },
  });
  const { id } = await created.json();
  const response = await server.fhir(`/Bot/${id}/$execute`, {
    method: 'POST',
    body: JSON.stringify(input),
    headers: { 'Content-Type': 'application/json' },
  });
  return {
    status: response.status,
    traceId: response.headers.get('x-trace-id'),
    json: await response.json(),
  };
}

/** What a failed fetch rejected with, as the bot sees it. */
const CATCHING = `try { await fetch(event.input.url); return { fetched: true }; }
  catch (e) { return { name: e.name, message: e.message, isTypeError: e instanceof TypeError, cause: e.cause && e.cause.message }; }`;

/** The `fetch` details of the AuditEvent of the execution with `traceId`. */
async function fetchDetails(server: TestServer, traceId: string): Promise<string[]> {
  await server.settled();
  const bundle = await (await server.fhir('/AuditEvent?_sort=-_lastUpdated&_count=20')).json();
  type Detail = { type: string; valueString: string };
  const audit = bundle.entry
    .map((entry: { resource: { entity: { detail: Detail[] }[] } }) => entry.resource)
    .find((resource: { entity: { detail: Detail[] }[] }) =>
      resource.entity[0].detail.some((d) => d.type === 'trace-id' && d.valueString === traceId),
    );
  return audit.entity[0].detail
    .filter((d: Detail) => d.type === 'fetch')
    .map((d: Detail) => d.valueString);
}

describe('a bot’s fetch', () => {
  let upstream: Upstream;
  let allowed: TestServer;
  let byDefault: TestServer;

  beforeAll(async () => {
    upstream = await startUpstream();
    [allowed, byDefault] = await Promise.all([
      startTestServer('pglite', { GRAPHIR_EGRESS_ALLOW: '127.0.0.1', GRAPHIR_BOT_MEMORY_MB: '16' }),
      startTestServer('pglite'),
    ]);
  });
  afterAll(async () => {
    await allowed?.stop();
    await byDefault?.stop();
    upstream?.close();
  });

  it('GETs JSON: status, headers, url and body', async () => {
    const { status, json } = await execute(
      allowed,
      `const r = await fetch(event.input.url);
       return { status: r.status, ok: r.ok, url: r.url, redirected: r.redirected, type: r.headers.get('content-type'),
                upstream: r.headers.get('x-upstream'), isResponse: r instanceof Response, body: await r.json() };`,
      { url: `${upstream.url}/json` },
    );
    expect({ status, json }).toEqual({ status: 200, json: expect.anything() });
    expect(json).toEqual({
      status: 200,
      ok: true,
      url: `${upstream.url}/json`,
      redirected: false,
      type: 'application/json',
      upstream: 'yes',
      isResponse: true,
      body: { hello: 'wörld' },
    });
  });

  it('POSTs a JSON body with its headers', async () => {
    const { json } = await execute(
      allowed,
      `const r = await fetch(event.input.url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Custom': 'yes' },
                                               body: JSON.stringify({ a: 'é', b: [1, 2] }) });
       return { status: r.status, body: await r.json() };`,
      { url: `${upstream.url}/echo` },
    );
    expect(json).toEqual({
      status: 201,
      body: {
        method: 'POST',
        contentType: 'application/json',
        custom: 'yes',
        body: '{"a":"é","b":[1,2]}',
      },
    });
  });

  it('resolves a non-2xx status normally, with its status text and each Set-Cookie', async () => {
    const { json } = await execute(
      allowed,
      `const r = await fetch(event.input.url);
       return { status: r.status, ok: r.ok, statusText: r.statusText, cookies: r.headers.getSetCookie(), body: await r.text() };`,
      { url: `${upstream.url}/teapot` },
    );
    expect(json).toEqual({
      status: 418,
      ok: false,
      statusText: "I'm a teapot",
      cookies: ['a=1', 'b=2'],
      body: 'short',
    });
  });

  it('carries binary bodies both ways unchanged', async () => {
    const { json } = await execute(
      allowed,
      `const bytes = new Uint8Array(await (await fetch(event.input.url + '/binary')).arrayBuffer());
       const echoed = await (await fetch(event.input.url + '/echo', { method: 'PUT', body: new Uint8Array([104, 105, 0, 255]) })).json();
       return { length: bytes.length, same: bytes.every((byte, index) => byte === index), echoed: echoed.body.length };`,
      { url: upstream.url },
    );
    expect(json).toEqual({ length: 256, same: true, echoed: 4 });
  });

  it('follows redirects to allowed addresses, and refuses one to a refused address', async () => {
    const to = `${upstream.url.replace('127.0.0.1', '127.0.0.2')}/json`;
    const { json } = await execute(
      allowed,
      `const followed = await fetch(event.input.url + '/redirect?to=' + encodeURIComponent(event.input.url + '/json'));
       let refused;
       try { await fetch(event.input.url + '/redirect?to=' + encodeURIComponent(event.input.to)); }
       catch (e) { refused = { isTypeError: e instanceof TypeError, message: e.message, cause: e.cause.message }; }
       const manual = await fetch(event.input.url + '/redirect?to=' + encodeURIComponent(event.input.to), { redirect: 'manual' });
       return { redirected: followed.redirected, url: followed.url, refused, manual: [manual.status, manual.headers.get('location')] };`,
      { url: upstream.url, to },
    );
    expect(json).toEqual({
      redirected: true,
      url: `${upstream.url}/json`,
      refused: {
        isTypeError: true,
        message: 'fetch failed',
        cause: '127.0.0.2 is a loopback address, which GRAPHIR_EGRESS_ALLOW does not allow',
      },
      manual: [302, to],
    });
  });

  it.each([
    ['loopback by address', () => `${upstream.url}/json`, '127.0.0.1 is a loopback address'],
    [
      'localhost',
      () => `${upstream.url.replace('127.0.0.1', 'localhost')}/json`,
      /^localhost resolves to (127\.0\.0\.1|::1), a loopback address/,
    ],
    [
      'the cloud metadata address',
      () => 'http://169.254.169.254/latest/meta-data/',
      '169.254.169.254 is a cloud metadata address',
    ],
    ['a private address', () => 'http://10.0.0.1/', '10.0.0.1 is a private address'],
  ])('refuses %s by default, as a TypeError saying why', async (_name, url, reason) => {
    const before = upstream.seen.length;
    const { json } = await execute(byDefault, CATCHING, { url: url() });
    expect(json).toMatchObject({ name: 'TypeError', message: 'fetch failed', isTypeError: true });
    expect(json.cause).toMatch(reason);
    expect(json.cause).toContain('which GRAPHIR_EGRESS_ALLOW does not allow');
    expect(upstream.seen.length).toBe(before);
  });

  it('refuses what is not http or https', async () => {
    const { json } = await execute(allowed, CATCHING, { url: 'file:///etc/passwd' });
    expect(json).toMatchObject({
      isTypeError: true,
      cause: 'fetch sends http and https requests only, not file:',
    });
  });

  it('keeps at most 6 requests in flight; the others wait their turn', async () => {
    upstream.maxHeld = 0;
    const { json } = await execute(
      allowed,
      `const responses = await Promise.all(Array.from({ length: 15 }, () => fetch(event.input.url + '/held')));
       return Promise.all(responses.map((r) => r.text()));`,
      { url: upstream.url },
    );
    expect(json).toEqual(Array(15).fill('done'));
    expect(upstream.maxHeld).toBe(6);
  });

  it('refuses a body larger than a quarter of the bot’s memory, whether declared or not', async () => {
    // 16 MB of memory: 4 MB at most.
    const { json } = await execute(
      allowed,
      `const small = (await (await fetch(event.input.url + '/big?bytes=' + (3 * 1024 * 1024))).text()).length;
       const failures = [];
       for (const path of ['/big?bytes=' + (5 * 1024 * 1024), '/declared']) {
         try { await fetch(event.input.url + path); } catch (e) { failures.push(e.message + ': ' + e.cause.message); }
       }
       return { small, failures };`,
      { url: upstream.url },
    );
    expect(json.small).toBe(3 * 1024 * 1024);
    expect(json.failures).toHaveLength(2);
    for (const failure of json.failures)
      expect(failure).toMatch(
        /^fetch failed: The response to GET http:\/\/127\.0\.0\.1:\d+\/(big|declared)\S* is larger than the 4194304 bytes a bot may read/,
      );
  });

  it('counts responses against the bot’s memory', async () => {
    // Each within the body limit (4 MB); together past the bot's 16 MB.
    const { status, json } = await execute(
      allowed,
      `const kept = [];
       for (let i = 0; i < 5; i++) kept.push(await (await fetch(event.input.url + '/zeros?bytes=' + (3 * 1024 * 1024))).arrayBuffer());
       return kept.length;`,
      { url: upstream.url },
    );
    expect(status).toBe(400);
    expect(json.issue[0].code).toBe('too-costly');
  });

  it('ends with the bot’s deadline when a server does not answer (408)', async () => {
    const started = performance.now();
    const { status, traceId } = await execute(
      allowed,
      `await fetch(event.input.url + '/slow'); return 'answered';`,
      { url: upstream.url },
      { timeout: 1 },
    );
    expect(status).toBe(408);
    // The deadline, not the upstream's silence, ended it (with room for a loaded machine).
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(await fetchDetails(allowed, traceId!)).toEqual([
      expect.stringMatching(/^GET 127\.0\.0\.1:\d+ cut off \d+ ms: the bot ended$/),
    ]);
  });

  it('lists each request in the execution’s AuditEvent: method, host, status, duration', async () => {
    const { json, traceId } = await execute(
      allowed,
      `await fetch(event.input.url + '/json');
       await fetch(event.input.url + '/echo', { method: 'POST', body: 'x' });
       try { await fetch('http://169.254.169.254/'); } catch {}
       return { done: true };`,
      { url: upstream.url },
    );
    expect(json).toEqual({ done: true });
    const details = await fetchDetails(allowed, traceId!);
    expect(details).toEqual([
      expect.stringMatching(/^GET 127\.0\.0\.1:\d+ 200 \d+ ms$/),
      expect.stringMatching(/^POST 127\.0\.0\.1:\d+ 201 \d+ ms$/),
      expect.stringMatching(
        /^GET 169\.254\.169\.254 failed \d+ ms: 169\.254\.169\.254 is a cloud metadata address, which GRAPHIR_EGRESS_ALLOW does not allow$/,
      ),
    ]);
  });
});

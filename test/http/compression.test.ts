/**
 * Compression and bodies kept in memory, over HTTP and read as raw bytes (fetch would decode
 * them): br or gzip as the client accepts, nothing for small bodies, HEAD or clients that accept
 * neither; the SDL, introspection answers and playground files compressed once, with strong
 * ETags of their content and 304 for `If-None-Match`.
 */
import { createHash } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer('pglite');
  // Enough patients that a search answers well over a kilobyte.
  const entry = Array.from({ length: 30 }, (_, i) => ({
    resource: {
      resourceType: 'Patient',
      id: `z${i}`,
      name: [{ family: `Zip${i}`, given: ['Ada'] }],
    },
    request: { method: 'PUT', url: `Patient/z${i}` },
  }));
  const stored = await server.fhir('', {
    method: 'POST',
    body: { resourceType: 'Bundle', type: 'transaction', entry },
  });
  expect(stored.status).toBe(200);
});
afterAll(() => server?.stop());

/** The bytes as sent, undecoded; `headers` replace the defaults (a token, no Accept-Encoding). */
function raw(
  path: string,
  headers: Record<string, string> = {},
  { method = 'GET', body }: { method?: string; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sent = request(
      `${server.url}${path}`,
      {
        method,
        headers: {
          Authorization: `Bearer ${server.project.token}`,
          ...(body ? { 'Content-Type': 'application/json' } : {}),
          ...headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            body: Buffer.concat(chunks),
          }),
        );
        response.on('error', reject);
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

function decoded({ headers, body }: RawResponse): string {
  const coding = headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(body).toString();
  if (coding === 'gzip') return gunzipSync(body).toString();
  expect(coding).toBeUndefined();
  return body.toString();
}

const SEARCH = '/fhir/R4/Patient?_count=30&_sort=family';
const SDL = '/fhir/R4/$graphql/schema.graphql';
const INTROSPECTION = `/fhir/R4/$graphql?query=${encodeURIComponent(
  '{ __type(name: "Patient") { name fields { name type { name kind } } } }',
)}`;

describe('compressed answers', () => {
  it.each([
    ['gzip', 'gzip'],
    ['br', 'br'],
    // Both accepted: br, the smaller.
    ['gzip, deflate, br, zstd', 'br'],
    ['gzip;q=1, br;q=0', 'gzip'],
    ['*', 'gzip'],
  ])('Accept-Encoding: %s compresses a FHIR search as %s', async (accepted, coding) => {
    const plain = await raw(SEARCH);
    const response = await raw(SEARCH, { 'Accept-Encoding': accepted });
    expect(response.status).toBe(200);
    expect(response.headers['content-encoding']).toBe(coding);
    expect(response.headers['content-type']).toBe('application/fhir+json; charset=utf-8');
    expect(response.headers.vary).toMatch(/Accept-Encoding/);
    expect(response.body.length).toBeLessThan(plain.body.length / 2);
    const bundle = JSON.parse(decoded(response));
    expect(bundle.entry).toHaveLength(30);
    expect(bundle.entry).toEqual(JSON.parse(plain.body.toString()).entry);
  });

  it.each([
    ['none sent', {}],
    ['identity', { 'Accept-Encoding': 'identity' }],
    ['deflate only', { 'Accept-Encoding': 'deflate' }],
  ])(
    'sends the bytes as they are to a client that accepts no br or gzip (%s)',
    async (_name, headers) => {
      const response = await raw(SEARCH, headers);
      expect(response.status).toBe(200);
      expect(response.headers['content-encoding']).toBeUndefined();
      expect(Number(response.headers['content-length'])).toBe(response.body.length);
      expect(JSON.parse(response.body.toString()).entry).toHaveLength(30);
    },
  );

  it('leaves bodies under 1 KiB alone', async () => {
    const response = await raw('/fhir/R4/Patient/z1', { 'Accept-Encoding': 'gzip, br' });
    expect(response.status).toBe(200);
    expect(response.body.length).toBeLessThan(1024);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect(Number(response.headers['content-length'])).toBe(response.body.length);
    expect(JSON.parse(response.body.toString()).id).toBe('z1');
  });

  it('answers HEAD with the length of the uncompressed answer and no body', async () => {
    const plain = await raw(SEARCH);
    const head = await raw(SEARCH, { 'Accept-Encoding': 'gzip, br' }, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-encoding']).toBeUndefined();
    expect(Number(head.headers['content-length'])).toBe(plain.body.length);
  });

  it('compresses GraphQL answers', async () => {
    const response = await raw(
      '/fhir/R4/$graphql',
      { 'Accept-Encoding': 'gzip' },
      {
        method: 'POST',
        body: JSON.stringify({ query: '{ PatientList(_count: 30) { id name { family given } } }' }),
      },
    );
    expect(response.status).toBe(200);
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(decoded(response)).data.PatientList).toHaveLength(30);
  });

  it('compresses error answers that are large enough, and keeps their status', async () => {
    const response = await raw(
      '/fhir/R4/$graphql',
      { 'Accept-Encoding': 'br' },
      {
        method: 'POST',
        body: JSON.stringify({
          query: `{ ${Array.from({ length: 20 }, (_, i) => `NoSuchField${i}`).join(' ')} }`,
        }),
      },
    );
    expect(response.status).toBe(400);
    expect(response.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decoded(response)).errors.length).toBeGreaterThan(1);
  });
});

describe.each([
  ['the SDL', SDL, 'text/plain; charset=utf-8', 'type Patient {'],
  ['an introspection answer', INTROSPECTION, 'application/json; charset=utf-8', '"__type"'],
  ['the playground page', '/fhir/R4/$graphql', 'text/html; charset=utf-8', 'GraphiQL'],
])('%s, kept in memory', (_name, path, type, content) => {
  const headers: Record<string, string> =
    path === '/fhir/R4/$graphql' ? { Accept: 'text/html' } : { Accept: 'application/json' };
  let plain: RawResponse;
  beforeAll(async () => {
    plain = await raw(path, headers);
  });

  it('carries a strong ETag, the SHA-256 of its content', async () => {
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe(type);
    expect(plain.body.toString()).toContain(content);
    const hash = createHash('sha256').update(plain.body).digest('base64url');
    expect(plain.headers.etag).toBe(`"${hash}"`);
    expect((await raw(path, headers)).headers.etag).toBe(plain.headers.etag);
  });

  it.each(['br', 'gzip'])('is sent as %s, with a tag of its own', async (coding) => {
    const first = await raw(path, { ...headers, 'Accept-Encoding': coding });
    const again = await raw(path, { ...headers, 'Accept-Encoding': coding });
    expect(first.status).toBe(200);
    expect(first.headers['content-encoding']).toBe(coding);
    expect(first.headers.vary).toMatch(/Accept-Encoding/);
    expect(decoded(first)).toBe(plain.body.toString());
    expect(again.body.equals(first.body)).toBe(true);
    expect(first.headers.etag).toBe(plain.headers.etag!.replace(/"$/, `-${coding}"`));
  });

  it.each([
    ['its tag', (tag: string) => tag],
    ['its tag, weak', (tag: string) => `W/${tag}`],
    ['a list holding its tag', (tag: string) => `"other", ${tag}`],
    ['*', () => '*'],
  ])('answers 304 to If-None-Match naming %s', async (_case, match) => {
    const first = await raw(path, { ...headers, 'Accept-Encoding': 'br' });
    const response = await raw(path, {
      ...headers,
      'Accept-Encoding': 'br',
      'If-None-Match': match(first.headers.etag!),
    });
    expect(response.status).toBe(304);
    expect(response.body.length).toBe(0);
    expect(response.headers.etag).toBe(first.headers.etag);
  });

  it.each([
    ['another tag', '"not-this-one"'],
    ['the tag of another coding', (tag: string) => tag.replace(/-br"$/, '-gzip"')],
  ])('answers in full to If-None-Match naming %s', async (_case, match) => {
    const first = await raw(path, { ...headers, 'Accept-Encoding': 'br' });
    const tag = typeof match === 'string' ? match : match(first.headers.etag!);
    const response = await raw(path, { ...headers, 'Accept-Encoding': 'br', 'If-None-Match': tag });
    expect(response.status).toBe(200);
    expect(response.body.equals(first.body)).toBe(true);
  });
});

describe('introspection over POST', () => {
  const body = JSON.stringify({
    query: '{ __type(name: "Observation") { name fields { name } } }',
  });

  it('carries the ETag but ignores If-None-Match: a POST is answered in full', async () => {
    const first = await raw(
      '/fhir/R4/$graphql',
      { 'Accept-Encoding': 'gzip' },
      { method: 'POST', body },
    );
    expect(first.status).toBe(200);
    expect(first.headers.etag).toMatch(/^"[A-Za-z0-9_-]{43}-gzip"$/);
    const again = await raw(
      '/fhir/R4/$graphql',
      { 'Accept-Encoding': 'gzip', 'If-None-Match': first.headers.etag! },
      { method: 'POST', body },
    );
    expect(again.status).toBe(200);
    expect(JSON.parse(decoded(again)).data.__type.name).toBe('Observation');
  });
});

describe('playground scripts', () => {
  it('are sent as br, with immutable caching and an ETag', async () => {
    const page = (await raw('/fhir/R4/$graphql', { Accept: 'text/html' })).body.toString();
    const script = /src="(\/playground\/assets\/graphiql-[^"]+\.js)"/.exec(page)![1];
    const plain = await raw(script);
    const response = await raw(script, { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(response.status).toBe(200);
    expect(response.headers['content-encoding']).toBe('br');
    expect(response.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(response.headers['cache-control']).toContain('immutable');
    expect(response.body.length).toBeLessThan(plain.body.length / 3);
    expect(brotliDecompressSync(response.body).equals(plain.body)).toBe(true);
    const revalidated = await raw(script, {
      'Accept-Encoding': 'gzip, deflate, br',
      'If-None-Match': response.headers.etag!,
    });
    expect(revalidated.status).toBe(304);
  });
});

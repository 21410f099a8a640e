/**
 * Compression over HTTP, read as raw bytes (fetch would decode them): br or gzip as the client
 * accepts, nothing for small bodies, HEAD or clients that accept neither.
 */
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

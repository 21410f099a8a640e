/**
 * What one GraphQL query may make the server hold, bounded before it is parsed or kept: its
 * text's bytes (GRAPHIR_GRAPHQL_MAX_QUERY_BYTES) and tokens (GRAPHIR_GRAPHQL_MAX_TOKENS), each at
 * the limit and one past it; a query any limit refuses is never kept in the cache of parsed
 * queries; and queries of 2 MB of fields, which once kept about 200 MB of heap each, leave the
 * heap as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keptQueries } from '../../runtime/graphql/prepared-query-cache.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const MAX_BYTES = 2_000;
const MAX_TOKENS = 60;

async function graphql(server: TestServer, query: string) {
  const response = await server.fhir('/$graphql', {
    method: 'POST',
    body: JSON.stringify({ query }),
    headers: { 'Content-Type': 'application/json' },
  });
  return { status: response.status, body: await response.json() };
}

/** `{ __typename … }` with that many tokens: the braces and one name each. */
const withTokens = (tokens: number) => `{ ${'__typename '.repeat(tokens - 2)}}`;
/** A valid query of exactly `bytes` bytes: spaces are no tokens. */
const withBytes = (bytes: number) => `{ __typename${' '.repeat(bytes - '{ __typename}'.length)}}`;

describe('GraphQL query size', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite', {
      GRAPHIR_GRAPHQL_MAX_QUERY_BYTES: String(MAX_BYTES),
      GRAPHIR_GRAPHQL_MAX_TOKENS: String(MAX_TOKENS),
    });
  });
  afterAll(() => server?.stop());

  it('query bytes: at the limit', async () => {
    const { status, body } = await graphql(server, withBytes(MAX_BYTES));
    expect(status).toBe(200);
    expect(body.data.__typename).toBe('Query');
  });

  it('query bytes: one past it', async () => {
    const { status, body } = await graphql(server, withBytes(MAX_BYTES + 1));
    expect(status).toBe(400);
    expect(body.data).toBeUndefined();
    expect(body.errors[0].message).toBe(
      `The query is ${MAX_BYTES + 1} bytes long; the maximum is ${MAX_BYTES}`,
    );
  });

  it('tokens: at the limit', async () => {
    expect((await graphql(server, withTokens(MAX_TOKENS))).status).toBe(200);
  });

  it('tokens: one past it', async () => {
    const { status, body } = await graphql(server, withTokens(MAX_TOKENS + 1));
    expect(status).toBe(400);
    expect(body.errors[0].message).toBe(`The query has more than ${MAX_TOKENS} tokens`);
  });
});

describe('the cache of parsed queries', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite', { GRAPHIR_GRAPHQL_MAX_COST: '100' });
  });
  afterAll(() => server?.stop());

  const kept = () => keptQueries(server.schema);

  it('keeps a query the limits pass, and never one they refuse', async () => {
    const before = kept();
    expect((await graphql(server, '{ PatientList(_count: 5) { id } }')).status).toBe(200);
    const afterPassed = kept();
    expect(afterPassed.entries).toBe(before.entries + 1);
    for (let i = 0; i < 20; i++) {
      // Distinct texts, each over the cost limit of 100.
      const refused = await graphql(server, `{ PatientList(_count: ${200 + i}) { id } }`);
      expect(refused.status).toBe(400);
    }
    expect(kept()).toEqual(afterPassed);
  });
});

describe('queries of 2 MB of fields', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite');
  });
  afterAll(() => server?.stop());

  it('are refused before they are parsed, and leave the heap as it was', async () => {
    // 190,000 fields (a field selected again merges with itself), 2.1 MB: a valid query far over
    // the cost limit. Each request's text differs, so that nothing could be shared.
    const fields = '__typename '.repeat(190_000);
    const heapBefore = settledHeap();
    for (let i = 0; i < 100; i++) {
      const query = `# request ${i}\n{ ${fields}}`;
      const { status, body } = await graphql(server, query);
      expect(status).toBe(400);
      expect(body.errors[0].message).toMatch(/bytes long; the maximum is/);
    }
    // What is kept may not grow: some megabytes of the server's own caches at most.
    expect(settledHeap() - heapBefore).toBeLessThan(64 * 1024 * 1024);
    expect((await graphql(server, '{ __typename }')).status).toBe(200);
  }, 120_000);
});

/** The heap in use after a full collection (vitest.config.ts runs tests with --expose-gc). */
function settledHeap(): number {
  const { gc } = globalThis as { gc?: () => void };
  if (!gc) throw new Error('this test needs node --expose-gc');
  gc();
  return process.memoryUsage().heapUsed;
}

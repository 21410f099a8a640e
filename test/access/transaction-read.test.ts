/**
 * Read entries (`GET Type/id`) of a transaction Bundle, found while testing project isolation:
 * they run outside the transaction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const put = (r: any) => ({
  request: { method: 'PUT', url: `${r.resourceType}/${r.id}` },
  resource: r,
});
const request = (method: string, url: string) => ({ request: { method, url } });
const bundle = (type: string, ...entry: unknown[]) => ({ resourceType: 'Bundle', type, entry });
const patient = (id: string, family: string) => ({
  resourceType: 'Patient',
  id,
  name: [{ family }],
});

describe.each(await availableEngines())('read entries of a transaction on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  // On PGlite the server is stuck after the test below; do not wait for it forever.
  afterAll(() =>
    Promise.race([server?.stop(), new Promise((resolve) => setTimeout(resolve, 2000))]),
  );

  // Regression test: GET entries read inside the transaction (they once ran outside it: PGlite hung, PostgreSQL missed the writes).
  it('a GET entry reads what the transaction wrote', async () => {
    const body = bundle(
      'transaction',
      put(patient('rw-1', 'Written')),
      request('GET', 'Patient/rw-1'),
    );
    const response = await fetch(server.base, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/fhir+json',
        Authorization: `Bearer ${server.project.token}`,
      },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).entry[1].resource).toMatchObject({
      id: 'rw-1',
      meta: { versionId: '1' },
    });
  });
});

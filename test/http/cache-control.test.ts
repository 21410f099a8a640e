/**
 * Answers of the FHIR and admin APIs say `Cache-Control: no-store` (runtime/http/no-store.ts),
 * errors too; conditional reads a client sends itself still answer 304 (conditional-read.test.ts);
 * the GraphQL SDL and the playground's page, which hold no one's data, may be kept and checked
 * again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

let server: TestServer;
let patientId: string;
beforeAll(async () => {
  server = await startTestServer('pglite');
  const created = await server.fhir('/Patient', {
    method: 'POST',
    body: { resourceType: 'Patient', name: [{ family: 'Uncached' }] },
  });
  patientId = (await created.json()).id;
});
afterAll(() => server?.stop());

describe('Cache-Control', () => {
  it.each([
    ['a read', () => server.fhir(`/Patient/${patientId}`), 200],
    ['a version read', () => server.fhir(`/Patient/${patientId}/_history/1`), 200],
    ['a search', () => server.fhir('/Patient?name=uncached'), 200],
    ['a history', () => server.fhir(`/Patient/${patientId}/_history`), 200],
    [
      'a GraphQL query',
      () =>
        server.fhir('/$graphql', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: `{ Patient(id: "${patientId}") { name { family } } }` }),
        }),
      200,
    ],
    ['a read of nothing', () => server.fhir('/Patient/nobody'), 404],
    ['a request without a token', () => server.fhir(`/Patient/${patientId}`, { token: null }), 401],
    [
      'a refused body',
      () => server.fhir('/Patient', { method: 'POST', body: { resourceType: 'Nope' } }),
      400,
    ],
    [
      'an admin answer',
      async () =>
        server.call(`/admin/projects/${server.project.projectId}/clients`, {
          method: 'POST',
          token: await server.rootToken(),
          body: { name: 'cached?', scope: 'system/Patient.r' },
        }),
      201,
    ],
  ])('of %s is no-store', async (_what, send, status) => {
    const response = await send();
    expect(response.status).toBe(status);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('leaves conditional reads working', async () => {
    const first = await server.fhir(`/Patient/${patientId}`);
    const etag = first.headers.get('etag')!;
    expect(etag).toBe('W/"1"');
    const again = await server.fhir(`/Patient/${patientId}`, {
      headers: { 'If-None-Match': etag },
    });
    expect(again.status).toBe(304);
    expect(again.headers.get('cache-control')).toBe('no-store');
  });

  it('lets the GraphQL SDL and the playground page be kept and checked again', async () => {
    const sdl = await server.fhir('/$graphql/schema.graphql');
    expect(sdl.status).toBe(200);
    expect(sdl.headers.get('cache-control')).toBe('no-cache');
    const page = await server.fhir('/$graphql', { token: null, headers: { Accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-cache');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('the runtime over HTTP', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite');
  });
  afterAll(() => server.stop());

  it('answers GET /healthz with 200 once started', async () => {
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', pid: process.pid });
  });

  it('answers 404 for an unknown route', async () => {
    const response = await fetch(`${server.url}/no-such-route`);
    expect(response.status).toBe(404);
  });

  it('answers 405 for another method on /healthz', async () => {
    const response = await fetch(`${server.url}/healthz`, { method: 'DELETE' });
    expect(response.status).toBe(405);
  });
});

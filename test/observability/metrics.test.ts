import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('GET /metrics', () => {
  let server: TestServer;
  const metrics = async () => {
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    return response.text();
  };

  beforeAll(async () => {
    server = await startTestServer('pglite');
  });
  afterAll(() => server?.stop());

  it('counts requests and their latency by method, route pattern and status, without a token', async () => {
    expect((await server.fhir('/Patient/nope')).status).toBe(404);
    const text = await metrics();
    expect(text).toContain(
      'graphir_http_requests_total{method="GET",route="/fhir/R4/:type/:id",status="404"} 1',
    );
    expect(text).toMatch(
      /graphir_http_request_duration_seconds_count\{method="GET",route="\/fhir\/R4\/:type\/:id",status="404"\} 1/,
    );
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('observes GraphQL query costs, refused queries included', async () => {
    const query = (q: string) =>
      server.fhir('/$graphql', {
        method: 'POST',
        body: { query: q },
        headers: { 'Content-Type': 'application/json' },
      });
    expect((await query('{ PatientList(_count: 5) { id } }')).status).toBe(200);
    expect((await query('{ PatientList(_count: 100000) { id } }')).status).toBe(400);
    const text = await metrics();
    expect(text).toContain('graphir_graphql_query_cost_count 2');
    expect(text).toContain('graphir_graphql_query_cost_bucket{le="100"} 1');
  });

  it('counts bot executions by status, with their duration', async () => {
    const bot = async (code: string) => {
      const response = await server.fhir('/Bot', {
        method: 'POST',
        body: { resourceType: 'Bot', name: 'm', code },
      });
      return ((await response.json()) as { id: string }).id;
    };
    const ok = await bot(`export async function handler() { return 'fine'; }`);
    const failing = await bot(`export async function handler() { throw new Error('no'); }`);
    expect((await server.fhir(`/Bot/${ok}/$execute`)).status).toBe(200);
    expect((await server.fhir(`/Bot/${ok}/$execute`)).status).toBe(200);
    expect((await server.fhir(`/Bot/${failing}/$execute`)).status).toBe(400);
    const text = await metrics();
    expect(text).toContain('graphir_bot_executions_total{status="ok"} 2');
    expect(text).toContain('graphir_bot_executions_total{status="error"} 1');
    expect(text).toContain('graphir_bot_execution_duration_seconds_count{status="ok"} 2');
  });
});

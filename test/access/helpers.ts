/** Shared checks for the access tests (not a test file itself). */
import { expect } from 'vitest';
import type { FhirResponse, TestServer } from '../support/test-server.js';
export { storedVersions } from '../support/stored-versions.js';

/** The response is an OperationOutcome with this status and (first) issue code. */
export async function expectOutcome(
  response: FhirResponse,
  status: number,
  code: string,
): Promise<any> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/fhir\+json/);
  const body = await response.json();
  expect(body).toMatchObject({ resourceType: 'OperationOutcome' });
  expect(body.issue[0]).toMatchObject({ severity: 'error', code });
  return body;
}

export function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** POST /oauth2/token with a form (or another body) and headers. */
export function tokenRequest(
  server: TestServer,
  fields: Record<string, string> | string,
  headers: Record<string, string> = {},
): Promise<FhirResponse> {
  const body = typeof fields === 'string' ? fields : new URLSearchParams(fields);
  return fetch(`${server.url}/oauth2/token`, {
    method: 'POST',
    body,
    headers,
  }) as Promise<FhirResponse>;
}

/** A client of the project made through the admin API with `scope`, and a token of it. */
export async function scopedClient(
  server: TestServer,
  projectId: string,
  adminToken: string,
  scope: string,
): Promise<{ clientId: string; clientSecret: string; token: string }> {
  const response = await server.call(`/admin/projects/${projectId}/clients`, {
    method: 'POST',
    body: { name: `client ${scope}`, scope },
    token: adminToken,
  });
  expect(response.status).toBe(201);
  const { clientId, clientSecret } = await response.json();
  return { clientId, clientSecret, token: await server.token(clientId, clientSecret) };
}

/** The `resourceType/id`s of a searchset Bundle's entries, with their search mode. */
export function entriesOf(bundle: any): string[] {
  return (bundle.entry ?? []).map(
    (e: any) => `${e.search?.mode ?? '?'}:${e.resource.resourceType}/${e.resource.id}`,
  );
}

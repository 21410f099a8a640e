/** A GraphQL request as JSON to a test server's `$graphql`, with its status and parsed body. */
import type { TestServer } from './test-server.js';

export async function postGraphQL(
  server: TestServer,
  query: string,
  variables?: Record<string, unknown>,
): Promise<{ status: number; body: any }> {
  const response = await server.fhir('/$graphql', {
    method: 'POST',
    body: JSON.stringify({ query, variables }),
    headers: { 'Content-Type': 'application/json' },
  });
  return { status: response.status, body: await response.json() };
}

/** Stores `resource` under its own id (PUT), failing the test if the server refuses. */
export async function putResource(
  server: TestServer,
  resource: { resourceType: string; id: string } & Record<string, unknown>,
): Promise<void> {
  const response = await server.fhir(`/${resource.resourceType}/${resource.id}`, {
    method: 'PUT',
    body: resource,
  });
  if (response.status >= 300)
    throw new Error(
      `PUT ${resource.resourceType}/${resource.id}: ${response.status} ${await response.text()}`,
    );
}

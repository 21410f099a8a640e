/** A user's first steps, as the contract describes them, with nothing but fetch. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { ROOT_CLIENT, startTestServer, type TestServer } from '../support/test-server.js';

describe.each(await availableEngines())('a user logs in on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  async function token(
    form: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<string> {
    const response = await fetch(`${server.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...form }).toString(),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { access_token: string; token_type: string };
    expect(body.token_type).toBe('Bearer');
    return body.access_token;
  }

  it('creates a project, logs in with its credentials, creates a Patient and reads it back', async () => {
    const root = await token(
      {},
      {
        Authorization: `Basic ${Buffer.from(`${ROOT_CLIENT.id}:${ROOT_CLIENT.secret}`).toString('base64')}`,
      },
    );
    const created = await fetch(`${server.url}/admin/projects`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${root}` },
      body: JSON.stringify({ name: 'Acme' }),
    });
    expect(created.status).toBe(201);
    const { projectId, clientId, clientSecret } = (await created.json()) as Record<string, string>;
    expect(projectId).toBeTruthy();

    const access = await token({ client_id: clientId, client_secret: clientSecret });
    const fhir = (path: string, init: RequestInit = {}) =>
      fetch(`${server.base}${path}`, {
        ...init,
        headers: {
          Accept: 'application/fhir+json',
          'Content-Type': 'application/fhir+json',
          Authorization: `Bearer ${access}`,
        },
      });

    const patient = {
      resourceType: 'Patient',
      name: [{ family: 'Lovelace', given: ['Ada'] }],
      birthDate: '1815-12-10',
    };
    const post = await fhir('/Patient', { method: 'POST', body: JSON.stringify(patient) });
    expect(post.status).toBe(201);
    const stored = (await post.json()) as any;
    expect(stored).toMatchObject({ ...patient, id: expect.any(String), meta: { versionId: '1' } });
    expect(post.headers.get('location')).toBe(`${server.base}/Patient/${stored.id}/_history/1`);

    const read = await fhir(`/Patient/${stored.id}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(stored);

    const found = (await (await fhir('/Patient?family=Lovelace')).json()) as any;
    expect(found.total).toBe(1);
    expect(found.entry[0].resource).toEqual(stored);

    // The server's other project does not see it.
    expect((await server.fhir(`/Patient/${stored.id}`)).status).toBe(404);
    // Nor does the same request without the token.
    expect((await fetch(`${server.base}/Patient/${stored.id}`)).status).toBe(401);
  });
});

/**
 * POST /oauth2/token: the client credentials grant (RFC 6749 §4.4), credentials in the form or
 * in HTTP Basic, optional `scope` that may only narrow the client's grant.
 */
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { basic, scopedClient, tokenRequest } from './helpers.js';

describe.each(await availableEngines())('POST /oauth2/token on %s', (engine) => {
  let server: TestServer;
  /** A client granted only system/Patient.rs. */
  let narrow: { clientId: string; clientSecret: string };
  beforeAll(async () => {
    server = await startTestServer(engine);
    narrow = await scopedClient(
      server,
      server.project.projectId,
      server.project.token,
      'system/Patient.rs',
    );
  });
  afterAll(() => server?.stop());

  const full = () => ({ id: server.project.clientId, secret: server.project.clientSecret });

  it.each([
    {
      how: 'in the form',
      request: () =>
        tokenRequest(server, {
          grant_type: 'client_credentials',
          client_id: full().id,
          client_secret: full().secret,
        }),
    },
    {
      how: 'in HTTP Basic',
      request: () =>
        tokenRequest(
          server,
          { grant_type: 'client_credentials' },
          { Authorization: basic(full().id, full().secret) },
        ),
    },
  ])('issues a signed ES256 token for credentials $how', async ({ request }) => {
    const response = await request();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await response.json();
    expect(body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'system/*.cruds',
    });
    const header = decodeProtectedHeader(body.access_token);
    expect(header.alg).toBe('ES256');
    const { rows } = await server.db.query<{ kid: string }>('SELECT kid FROM signing_key');
    expect(rows.map((r) => r.kid)).toContain(header.kid);
    const claims = decodeJwt(body.access_token);
    expect(claims).toMatchObject({
      sub: full().id,
      project: server.project.projectId,
      scope: 'system/*.cruds',
    });
    expect(claims.exp! - claims.iat!).toBe(3600);

    // The token works.
    const search = await server.fhir('/Patient', { token: body.access_token });
    expect(search.status).toBe(200);
  });

  it.each([
    { requested: 'system/Patient.rs', granted: 'system/Patient.rs' },
    { requested: 'system/Patient.read', granted: 'system/Patient.rs' },
    {
      requested: 'system/Observation.r system/Patient.s',
      granted: 'system/Observation.r system/Patient.s',
    },
    { requested: 'system/*.rs', granted: 'system/*.rs' },
    { requested: '  system/Patient.c  ', granted: 'system/Patient.c' },
  ])('narrows a full-access client to $requested', async ({ requested, granted }) => {
    const response = await tokenRequest(server, {
      grant_type: 'client_credentials',
      client_id: full().id,
      client_secret: full().secret,
      scope: requested,
    });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.scope).toBe(granted);
    expect(decodeJwt(body.access_token).scope).toBe(granted);
  });

  it('a narrowed token is held to its narrower scope', async () => {
    const token = await server.token(full().id, full().secret, 'system/Patient.rs');
    expect((await server.fhir('/Patient', { token })).status).toBe(200);
    const create = await server.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient' },
      token,
    });
    expect(create.status).toBe(403);
  });

  it('a narrow client without `scope` gets its own grant', async () => {
    const response = await tokenRequest(server, {
      grant_type: 'client_credentials',
      client_id: narrow.clientId,
      client_secret: narrow.clientSecret,
    });
    expect(response.status).toBe(200);
    expect((await response.json()).scope).toBe('system/Patient.rs');
  });

  type Bad = {
    name: string;
    request: () => Promise<Response>;
    status: number;
    error: string;
    challenge?: RegExp;
  };
  const credentials = () => ({
    grant_type: 'client_credentials',
    client_id: full().id,
    client_secret: full().secret,
  });
  const narrowForm = (scope: string) => ({
    grant_type: 'client_credentials',
    client_id: narrow.clientId,
    client_secret: narrow.clientSecret,
    scope,
  });
  const bad: Bad[] = [
    {
      name: 'a wider scope (system/*.cruds)',
      request: () => tokenRequest(server, narrowForm('system/*.cruds')),
      status: 400,
      error: 'invalid_scope',
    },
    {
      name: 'a scope on another type',
      request: () => tokenRequest(server, narrowForm('system/Observation.r')),
      status: 400,
      error: 'invalid_scope',
    },
    {
      name: 'a wider interaction',
      request: () => tokenRequest(server, narrowForm('system/Patient.rus')),
      status: 400,
      error: 'invalid_scope',
    },
    {
      name: 'the wildcard for a narrow grant',
      request: () => tokenRequest(server, narrowForm('system/*.r')),
      status: 400,
      error: 'invalid_scope',
    },
    ...[
      'patient/Patient.read',
      'system/Patient.sr',
      'system/Patient.x',
      'system/patient.r',
      'user/*.*',
      'system/Patient',
      'openid',
    ].map((scope): Bad => ({
      name: `a malformed scope "${scope}"`,
      request: () => tokenRequest(server, { ...credentials(), scope }),
      status: 400,
      error: 'invalid_scope',
    })),
    {
      name: 'a wrong secret',
      request: () => tokenRequest(server, { ...credentials(), client_secret: 'wrong' }),
      status: 401,
      error: 'invalid_client',
    },
    {
      name: 'an unknown client',
      request: () => tokenRequest(server, { ...credentials(), client_id: 'nobody' }),
      status: 401,
      error: 'invalid_client',
    },
    {
      name: 'no secret',
      request: () =>
        tokenRequest(server, { grant_type: 'client_credentials', client_id: full().id }),
      status: 401,
      error: 'invalid_client',
    },
    {
      name: 'no credentials at all',
      request: () => tokenRequest(server, { grant_type: 'client_credentials' }),
      status: 401,
      error: 'invalid_client',
    },
    {
      name: 'HTTP Basic with a wrong secret',
      request: () =>
        tokenRequest(
          server,
          { grant_type: 'client_credentials' },
          { Authorization: basic(full().id, 'wrong') },
        ),
      status: 401,
      error: 'invalid_client',
      challenge: /^Basic /,
    },
    {
      name: 'HTTP Basic of an unknown client',
      request: () =>
        tokenRequest(
          server,
          { grant_type: 'client_credentials' },
          { Authorization: basic('nobody', 'x') },
        ),
      status: 401,
      error: 'invalid_client',
      challenge: /^Basic /,
    },
    {
      name: 'an Authorization header that is not Basic',
      request: () => tokenRequest(server, credentials(), { Authorization: 'Bearer abc' }),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'an unknown grant type',
      request: () => tokenRequest(server, { ...credentials(), grant_type: 'password' }),
      status: 400,
      error: 'unsupported_grant_type',
    },
    {
      name: 'the authorization code grant',
      request: () =>
        tokenRequest(server, { ...credentials(), grant_type: 'authorization_code', code: 'x' }),
      status: 400,
      error: 'unsupported_grant_type',
    },
    {
      name: 'no grant_type',
      request: () => tokenRequest(server, { client_id: full().id, client_secret: full().secret }),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'a JSON body instead of a form',
      request: () =>
        tokenRequest(server, JSON.stringify(credentials()), { 'Content-Type': 'application/json' }),
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'no body',
      request: () => fetch(`${server.url}/oauth2/token`, { method: 'POST' }),
      status: 400,
      error: 'invalid_request',
    },
  ];

  it.each(bad)(
    'refuses $name with $status $error',
    async ({ request, status, error, challenge }) => {
      const response = await request();
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('cache-control')).toBe('no-store');
      const body = await response.json();
      expect(body).toMatchObject({ error });
      expect(body).not.toHaveProperty('access_token');
      if (status === 401)
        expect(response.headers.get('www-authenticate')).toMatch(challenge ?? /Basic/);
    },
  );

  it('refuses the credentials of a deleted client', async () => {
    const client = await scopedClient(
      server,
      server.project.projectId,
      server.project.token,
      'system/Patient.r',
    );
    const deleted = await server.call(
      `/admin/projects/${server.project.projectId}/clients/${client.clientId}`,
      {
        method: 'DELETE',
        token: server.project.token,
      },
    );
    expect(deleted.status).toBe(204);
    const response = await tokenRequest(server, {
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('a GET is not a token request', async () => {
    const response = await fetch(`${server.url}/oauth2/token`);
    expect(response.status).toBe(405);
  });
});

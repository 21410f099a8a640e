/**
 * What an access token says (client_id, sub, aud, iss, iat, exp, scope, and Graphir's own
 * project and admin), and the audience rule: a token is accepted only by the server whose FHIR
 * base URL it names — GRAPHIR_BASE_URL when set, else the origin each request was sent to —
 * checked on every request, the cached ones too.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { SignJWT, decodeJwt, importJWK, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { ROOT_CLIENT, startTestServer, type TestServer } from '../support/test-server.js';
import { expectOutcome, storedVersions } from './helpers.js';

const engines = await availableEngines();
const OTHER_HOST = 'graphir.test:8443';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: any;
}

/** A request to the server with the Host header given: how it is reached under another name. */
function viaHost(
  server: TestServer,
  host: string,
  path: string,
  {
    method = 'GET',
    headers = {},
    body,
  }: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, path, method, headers: { ...headers, Host: host } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            headers: response.headers,
            body: JSON.parse(text),
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** A token by client credentials, asked for under `host`. */
async function tokenVia(server: TestServer, host: string): Promise<string> {
  const answer = await viaHost(server, host, '/oauth2/token', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: server.project.clientId,
      client_secret: server.project.clientSecret,
    }).toString(),
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.access_token;
}

/** Signs `claims` with the server's own key, as only a leaked key or a bug could. */
async function signedByServer(server: TestServer, claims: JWTPayload): Promise<string> {
  const [{ kid, private_jwk }] = (
    await server.db.query<{ kid: string; private_jwk: JWK }>(
      'SELECT kid, private_jwk FROM signing_key',
    )
  ).rows;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
    .sign(await importJWK(private_jwk, 'ES256'));
}

const patient = JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Claims' }] });

describe.each(engines)('token claims on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  it('a project token carries client_id, sub, aud, iss, iat, exp, scope, project, admin, jti', () => {
    const claims = decodeJwt(server.project.token);
    expect(claims).toEqual({
      client_id: server.project.clientId,
      sub: server.project.clientId,
      aud: `${server.url}/fhir/R4`,
      iss: server.url,
      iat: expect.any(Number),
      exp: claims.iat! + 3600,
      scope: 'system/*.cruds',
      project: server.project.projectId,
      admin: true,
      jti: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it("the root client's token names no project, and the same audience", async () => {
    const claims = decodeJwt(await server.rootToken());
    expect(claims).toMatchObject({
      client_id: ROOT_CLIENT.id,
      sub: ROOT_CLIENT.id,
      aud: `${server.url}/fhir/R4`,
      iss: server.url,
    });
    expect(claims).not.toHaveProperty('project');
  });

  it('a token asked for under another Host names that origin, and works there', async () => {
    const token = await tokenVia(server, OTHER_HOST);
    expect(decodeJwt(token)).toMatchObject({
      aud: `http://${OTHER_HOST}/fhir/R4`,
      iss: `http://${OTHER_HOST}`,
    });
    const read = await viaHost(server, OTHER_HOST, '/fhir/R4/Patient', {
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(read.status).toBe(200);
    // Host names are case-insensitive, and a default port is no port: the same origin.
    const defaultPort = await tokenVia(server, 'graphir.test:80');
    expect(decodeJwt(defaultPort).aud).toBe('http://graphir.test/fhir/R4');
    for (const host of ['GRAPHIR.test', 'graphir.test:80']) {
      const answer = await viaHost(server, host, '/fhir/R4/Patient', {
        headers: { Authorization: `Bearer ${defaultPort}` },
      });
      expect(answer.status, host).toBe(200);
    }
  });

  it.each([
    { name: 'one issued under another Host, used at the server URL', other: true },
    { name: 'one issued at the server URL, used under another Host', other: false },
  ])('refuses a token for another audience ($name), cached or not', async ({ other }) => {
    const token = other ? await tokenVia(server, OTHER_HOST) : server.project.token;
    const [wrongHost, rightHost] = other
      ? [new URL(server.url).host, OTHER_HOST]
      : [OTHER_HOST, new URL(server.url).host];
    const tokenAudience = `http://${rightHost}/fhir/R4`;
    const send = (host: string) =>
      viaHost(server, host, '/fhir/R4/Patient', {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/fhir+json' },
        body: patient,
      });
    // Twice: the second time the token's signature comes from the cache, its audience never does.
    for (const round of ['fresh', 'cached']) {
      const before = await storedVersions(server);
      const refused = await send(wrongHost);
      expect(refused.status, round).toBe(401);
      expect(refused.headers['www-authenticate']).toBe(
        'Bearer realm="graphir", error="invalid_token"',
      );
      expect(refused.body).toMatchObject({ resourceType: 'OperationOutcome' });
      expect(refused.body.issue[0]).toMatchObject({ severity: 'error', code: 'login' });
      expect(refused.body.issue[0].diagnostics).toBe(
        `The access token is for another audience (${tokenAudience}), not this server's FHIR base http://${wrongHost}/fhir/R4`,
      );
      expect(await storedVersions(server)).toBe(before);
      expect((await send(rightHost)).status, round).toBe(201);
    }
  });

  it.each([
    {
      name: 'another audience',
      claims: { aud: 'https://elsewhere.example/fhir/R4' },
      why: /another audience \(https:\/\/elsewhere/,
    },
    { name: "the server's root as audience", claims: { aud: '<root>' }, why: /another audience/ },
    { name: 'no audience', claims: { aud: undefined }, why: /no issuer or no audience/ },
    { name: 'an empty audience list', claims: { aud: [] }, why: /no issuer or no audience/ },
    { name: 'no issuer', claims: { iss: undefined }, why: /no issuer or no audience/ },
    {
      name: 'another issuer',
      claims: { iss: 'https://elsewhere.example' },
      why: /issued by https:\/\/elsewhere\.example, not by this server/,
    },
  ])('refuses a token signed by the server with $name', async ({ claims, why }) => {
    const real = decodeJwt(server.project.token);
    const token = await signedByServer(server, {
      ...real,
      jti: crypto.randomUUID(),
      ...claims,
      ...(claims.aud === '<root>' ? { aud: server.url } : {}),
    });
    const before = await storedVersions(server);
    const response = await server.fhir('/Patient', { method: 'POST', body: patient, token });
    const outcome = await expectOutcome(response, 401, 'login');
    expect(outcome.issue[0].diagnostics).toMatch(why);
    expect(await storedVersions(server)).toBe(before);
  });

  it('accepts a token whose audience list names this server among others', async () => {
    const real = decodeJwt(server.project.token);
    const token = await signedByServer(server, {
      ...real,
      aud: ['https://elsewhere.example/fhir/R4', `${server.url}/fhir/R4`],
    });
    expect((await server.fhir('/Patient', { token })).status).toBe(200);
  });

  it.each(['bad host', 'graphir.test/fhir', 'graphir.test:99999', 'graphir.test?x'])(
    'answers 400 to a Host that names no host (%s): no token issued, none checked',
    async (host) => {
      const token = await viaHost(server, host, '/oauth2/token', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `grant_type=client_credentials&client_id=${server.project.clientId}&client_secret=${server.project.clientSecret}`,
      });
      expect(token.status).toBe(400);
      expect(token.body).toEqual({
        error: 'invalid_request',
        error_description: 'The Host header names no valid host',
      });
      const before = await storedVersions(server);
      const write = await viaHost(server, host, '/fhir/R4/Patient', {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${server.project.token}`,
          'Content-Type': 'application/fhir+json',
        },
        body: patient,
      });
      expect(write.status).toBe(400);
      expect(write.body.issue[0]).toMatchObject({
        code: 'invalid',
        diagnostics: 'The Host header names no valid host',
      });
      expect(await storedVersions(server)).toBe(before);
    },
  );

  it('answers 400 to an HTTP/1.0 request without Host', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const { port } = new URL(server.url);
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.end(
          `GET /fhir/R4/Patient HTTP/1.0\r\nAuthorization: Bearer ${server.project.token}\r\n\r\n`,
        ),
      );
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.[01] 400 /);
    expect(answer).toContain('The Host header names no valid host');
  });
});

describe('GRAPHIR_BASE_URL', () => {
  let server: TestServer;
  beforeAll(async () => {
    // A trailing slash, as people write it; the setting keeps the root without it.
    server = await startTestServer('pglite', { GRAPHIR_BASE_URL: 'https://FHIR.example.org/' });
  });
  afterAll(() => server?.stop());

  it('is the issuer, and with /fhir/R4 the audience, whatever the request says', async () => {
    for (const token of [server.project.token, await tokenVia(server, OTHER_HOST)]) {
      expect(decodeJwt(token)).toMatchObject({
        iss: 'https://fhir.example.org',
        aud: 'https://fhir.example.org/fhir/R4',
      });
      expect((await server.fhir('/Patient', { token })).status).toBe(200);
      const elsewhere = await viaHost(server, OTHER_HOST, '/fhir/R4/Patient', {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(elsewhere.status).toBe(200);
    }
  });

  it("refuses a token for the request's own origin: the setting names the audience", async () => {
    const token = await signedByServer(server, {
      ...decodeJwt(server.project.token),
      iss: server.url,
      aud: `${server.url}/fhir/R4`,
    });
    const outcome = await expectOutcome(await server.fhir('/Patient', { token }), 401, 'login');
    expect(outcome.issue[0].diagnostics).toMatch(
      /another audience \(http:\/\/127\.0\.0\.1:\d+\/fhir\/R4\)/,
    );
  });

  it('keeps a path prefix (a proxy in front)', async () => {
    const prefixed = await startTestServer('pglite', {
      GRAPHIR_BASE_URL: 'https://example.org/graphir',
    });
    try {
      expect(decodeJwt(prefixed.project.token)).toMatchObject({
        iss: 'https://example.org/graphir',
        aud: 'https://example.org/graphir/fhir/R4',
      });
      expect((await prefixed.fhir('/Patient')).status).toBe(200);
      // Another server's token, for another audience, signed by this server's key.
      const token = await signedByServer(prefixed, {
        ...decodeJwt(prefixed.project.token),
        aud: 'https://fhir.example.org/fhir/R4',
      });
      await expectOutcome(await prefixed.fhir('/Patient', { token }), 401, 'login');
    } finally {
      await prefixed.stop();
    }
  });
});

/**
 * Every FHIR call but `GET metadata` needs a valid bearer token: missing, malformed, forged,
 * expired tokens and tokens of deleted clients get 401 + `WWW-Authenticate: Bearer` + an
 * OperationOutcome (`login`), on `$graphql` inside a GraphQL error; the root client's token reads
 * no FHIR data (403).
 */
import { SignJWT, decodeJwt, generateKeyPair, importJWK, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type FhirResponse, type TestServer } from '../support/test-server.js';
import { expectOutcome, scopedClient, storedVersions } from './helpers.js';

const patient = { resourceType: 'Patient', id: 'p1', name: [{ family: 'Kept' }] };

/** Every route shape under the FHIR base, and what it sends. */
const routes: {
  route: string;
  path: string;
  method?: string;
  body?: unknown;
  contentType?: string;
}[] = [
  { route: 'search', path: '/Patient' },
  { route: 'search with parameters', path: '/Patient?_id=p1&_include=Patient:organization' },
  {
    route: 'POST _search',
    path: '/Patient/_search',
    method: 'POST',
    body: '_id=p1',
    contentType: 'application/x-www-form-urlencoded',
  },
  { route: 'read', path: '/Patient/p1' },
  { route: 'vread', path: '/Patient/p1/_history/1' },
  { route: 'history', path: '/Patient/p1/_history' },
  { route: 'create', path: '/Patient', method: 'POST', body: { resourceType: 'Patient' } },
  {
    route: 'update',
    path: '/Patient/p1',
    method: 'PUT',
    body: { ...patient, name: [{ family: 'Changed' }] },
  },
  { route: 'delete', path: '/Patient/p1', method: 'DELETE' },
  {
    route: 'transaction',
    path: '',
    method: 'POST',
    body: {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        { request: { method: 'POST', url: 'Patient' }, resource: { resourceType: 'Patient' } },
      ],
    },
  },
  {
    route: 'batch',
    path: '',
    method: 'POST',
    body: {
      resourceType: 'Bundle',
      type: 'batch',
      entry: [{ request: { method: 'GET', url: 'Patient/p1' } }],
    },
  },
  { route: 'GraphQL (GET)', path: '/$graphql?query=%7BPatient(id%3A%22p1%22)%7Bid%7D%7D' },
  {
    route: 'GraphQL (POST)',
    path: '/$graphql',
    method: 'POST',
    body: { query: '{ Patient(id: "p1") { id } }' },
    contentType: 'application/json',
  },
  { route: 'the base itself', path: '' },
  { route: 'an unknown type', path: '/NoSuchType' },
  { route: 'metadata with a trailing path', path: '/metadata/x' },
];

/** $graphql answers GraphQL-shaped: the OperationOutcome inside an UNAUTHENTICATED error. */
async function expectGraphQLRefusal(response: FhirResponse): Promise<any> {
  expect(response.status).toBe(401);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  const body = await response.json();
  expect(body).not.toHaveProperty('data');
  expect(body.errors).toHaveLength(1);
  expect(body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  expect(body.errors[0].extensions.resource.issue[0]).toMatchObject({
    severity: 'error',
    code: 'login',
  });
  return body;
}

describe.each(await availableEngines())('bearer tokens on %s', (engine) => {
  let server: TestServer;
  const tokens = new Map<string, () => string | null>();
  beforeAll(async () => {
    server = await startTestServer(engine);
    expect((await server.fhir('/Patient/p1', { method: 'PUT', body: patient })).status).toBe(201);

    const real = server.project.token;
    const claims = decodeJwt(real) as JWTPayload & Record<string, unknown>;
    const now = Math.floor(Date.now() / 1000);
    const [{ kid: realKid, private_jwk, public_jwk }] = (
      await server.db.query<{ kid: string; private_jwk: JWK; public_jwk: JWK }>(
        'SELECT kid, private_jwk, public_jwk FROM signing_key',
      )
    ).rows;
    const serverKey = await importJWK(private_jwk, 'ES256');
    const other = await generateKeyPair('ES256');
    const sign = (
      payload: JWTPayload,
      key: Parameters<SignJWT['sign']>[0],
      header: Record<string, unknown>,
    ) => new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'JWT', ...header }).sign(key);
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const [, payloadPart, signaturePart] = real.split('.');

    const deleted = await scopedClient(server, server.project.projectId, real, 'system/*.cruds');
    expect((await server.fhir('/Patient/p1', { token: deleted.token })).status).toBe(200);
    const gone = await server.call(
      `/admin/projects/${server.project.projectId}/clients/${deleted.clientId}`,
      {
        method: 'DELETE',
        token: real,
      },
    );
    expect(gone.status).toBe(204);

    const forged: Record<string, string> = {
      'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
      'alg none with the real kid': `${b64({ alg: 'none', typ: 'JWT', kid: realKid })}.${payloadPart}.`,
      'another key, made-up kid': await sign(claims, other.privateKey, { kid: 'made-up-kid' }),
      "another key, the server's kid": await sign(claims, other.privateKey, { kid: realKid }),
      'another key, no kid': await sign(claims, other.privateKey, {}),
      'HS256 keyed with the public JWK': await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', kid: realKid })
        .sign(new TextEncoder().encode(JSON.stringify(public_jwk))),
      'expired (the real key)': await sign(
        { ...claims, iat: now - 7200, exp: now - 3600 },
        serverKey,
        { kid: realKid },
      ),
      'without exp (the real key)': await sign({ ...claims, exp: undefined }, serverKey, {
        kid: realKid,
      }),
      'another issuer (the real key)': await sign({ ...claims, iss: 'someone-else' }, serverKey, {
        kid: realKid,
      }),
      // Signed by the server's own key, as only a key leak or a bug would: still refused.
      'an unparsable scope (the real key)': await sign(
        { ...claims, scope: 'system/Patient.rs and more' },
        serverKey,
        { kid: realKid },
      ),
      'a payload changed after signing': `${real.split('.')[0]}.${b64({ ...claims, project: 'other' })}.${signaturePart}`,
      'of a deleted client': deleted.token,
    };
    for (const [name, token] of Object.entries(forged)) tokens.set(name, () => `Bearer ${token}`);
  });
  afterAll(() => server?.stop());

  const headers: Record<string, () => string | null> = {
    'no Authorization header': () => null,
    'Basic credentials': () =>
      `Basic ${Buffer.from(`${server.project.clientId}:${server.project.clientSecret}`).toString('base64')}`,
    'Bearer with nothing': () => 'Bearer',
    'Bearer and spaces': () => 'Bearer    ',
    'a bare token without Bearer': () => server.project.token,
    'a garbage token': () => 'Bearer not-a-token',
    'three garbage parts': () => 'Bearer abc.def.ghi',
    'a token with a space inside': () =>
      `Bearer ${server.project.token.slice(0, 20)} ${server.project.token.slice(20)}`,
  };
  const cases = [
    ...Object.keys(headers),
    'alg none',
    'alg none with the real kid',
    'another key, made-up kid',
    "another key, the server's kid",
    'another key, no kid',
    'HS256 keyed with the public JWK',
    'expired (the real key)',
    'without exp (the real key)',
    'another issuer (the real key)',
    'an unparsable scope (the real key)',
    'a payload changed after signing',
    'of a deleted client',
  ];

  describe.each(cases)('with %s', (credential) => {
    it.each(routes)(
      '$route gets 401 and changes nothing',
      async ({ path, method, body, contentType }) => {
        const authorization = (headers[credential] ?? tokens.get(credential)!)();
        const before = await storedVersions(server, server.project.projectId);
        const response = await server.fhir(path, {
          method,
          body,
          token: null,
          headers: {
            ...(contentType ? { 'Content-Type': contentType } : {}),
            ...(authorization === null ? {} : { Authorization: authorization }),
          },
        });
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
        const outcome = path.includes('$graphql')
          ? await expectGraphQLRefusal(response)
          : await expectOutcome(response, 401, 'login');
        expect(JSON.stringify(outcome)).not.toMatch(/at .*\.ts|Error:/);
        expect(await storedVersions(server, server.project.projectId)).toBe(before);
      },
    );
  });

  it('the real token passes (so the cases above fail for the token alone)', async () => {
    expect((await server.fhir('/Patient/p1')).status).toBe(200);
  });

  it.each(['no token', 'a garbage token'])('GET metadata works with %s', async (what) => {
    const response = await server.fhir('/metadata', {
      token: what === 'no token' ? null : 'garbage',
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ resourceType: 'CapabilityStatement' });
  });

  // GraphQL is left out: app.ts does not mount it (yet); the 401 cases above cover its paths.
  const fhirInteractions = routes.filter(
    (r) =>
      (/^\/Patient/.test(r.path) || (r.path === '' && r.method === 'POST')) &&
      !r.path.includes('$graphql'),
  );
  it.each(fhirInteractions)(
    "the root client's token gets 403 on $route",
    async ({ path, method, body, contentType }) => {
      const before = await storedVersions(server, server.project.projectId);
      const response = await server.fhir(path, {
        method,
        body,
        token: await server.rootToken(),
        headers: contentType ? { 'Content-Type': contentType } : {},
      });
      await expectOutcome(response, 403, 'forbidden');
      expect(await storedVersions(server, server.project.projectId)).toBe(before);
    },
  );
});

describe.each(await availableEngines())('paths spelled in another case on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  // Regression test: paths in another case must not slip past the token check.
  it.each([
    { method: 'GET', path: '/fhir/r4/Patient' },
    { method: 'GET', path: '/FHIR/R4/Patient/p1' },
    { method: 'POST', path: '/Admin/projects' },
  ])('$method $path without a token gets 401', async ({ method, path }) => {
    const response = (await fetch(`${server.url}${path}`, {
      method,
      ...(method === 'POST'
        ? { body: '{"name":"x"}', headers: { 'Content-Type': 'application/json' } }
        : {}),
    })) as any;
    await expectOutcome(response, 401, 'login'); // today: 500 exception
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
  });
});

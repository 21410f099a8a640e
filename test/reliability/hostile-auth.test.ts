/**
 * Hostile Authorization headers on a FHIR write: whatever the header holds — no scheme, `Bearer`
 * alone, garbage, bytes above 0x7f, a JWT with `alg: none`, a tampered or expired one, a huge one,
 * random JWTs, every small mutation of a real token — the answer is 401 with
 * `WWW-Authenticate: Bearer` and an OperationOutcome, and nothing is stored. The real token, in
 * each spelling of the scheme, is the one header that stores the resource (so the properties can
 * fail both ways). Sent through node:http so that latin1 bytes reach the server as written.
 * Then the token endpoint and the admin API with hostile credentials and values.
 */
import fc from 'fast-check';
import { SignJWT, importJWK, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedVersions } from '../support/stored-versions.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { expectOutcome, send, sendRaw, tryInputs, type Answer } from './hostile-harness.js';

const PATIENT = JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Hostile' }] });
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** What node:http lets a header value hold: tab, printable ASCII and latin1 bytes. */
const headerChar = fc
  .oneof(
    fc.integer({ min: 0x20, max: 0x7e }),
    fc.integer({ min: 0x80, max: 0xff }),
    fc.constant(0x09),
  )
  .map((code) => String.fromCharCode(code));
const headerText = fc.string({ unit: headerChar, maxLength: 300 });
const base64urlText = (maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...BASE64URL), maxLength });
type Mutation =
  | { kind: 'flip' | 'insert'; at: number; to: string }
  | { kind: 'delete' | 'truncate'; at: number }
  | { kind: 'swap parts' | 'no signature' | 'none' };

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe.each(await availableEngines())('hostile Authorization headers on %s', (engine) => {
  let server: TestServer;
  let token: string;
  let kid: string;
  let serverKey: Awaited<ReturnType<typeof importJWK>>;
  beforeAll(async () => {
    server = await startTestServer(engine);
    token = server.project.token;
    const { rows } = await server.db.query<{ kid: string; private_jwk: JWK }>(
      'SELECT kid, private_jwk FROM signing_key',
    );
    kid = rows[0].kid;
    serverKey = await importJWK(rows[0].private_jwk, 'ES256');
  });
  afterAll(() => server?.stop());

  /** POST a Patient with exactly this Authorization header (none for null). */
  const write = (authorization: string | null): Promise<Answer> =>
    sendRaw(server.url, '/fhir/R4/Patient', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/fhir+json',
        ...(authorization === null ? {} : { Authorization: authorization }),
      },
      body: PATIENT,
    });
  const expectUnauthorized = async (answer: Answer, storedBefore: number) => {
    expectOutcome(answer, [401]);
    expect(answer.body.issue[0].code).toBe('login');
    expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
    expect(await storedVersions(server)).toBe(storedBefore);
  };
  const expectStored = async (answer: Answer, storedBefore: number) => {
    expect(answer.status, answer.text.slice(0, 300)).toBe(201);
    expect(answer.body).toMatchObject({ resourceType: 'Patient', name: [{ family: 'Hostile' }] });
    expect(await storedVersions(server)).toBe(storedBefore + 1);
  };
  const claims = () => ({
    iss: 'graphir',
    sub: server.project.clientId,
    project: server.project.projectId,
    scope: 'system/*.cruds',
    admin: true,
  });
  const now = () => Math.floor(Date.now() / 1000);

  const malformed: [string, () => string | null | Promise<string>][] = [
    ['no header', () => null],
    ['an empty header', () => ''],
    ['no scheme, just the token', () => token],
    ['Bearer with nothing', () => 'Bearer'],
    ['Bearer and spaces', () => 'Bearer    '],
    ['Bearer: with a colon', () => `Bearer: ${token}`],
    ['garbage', () => 'Bearer !!not a token!!'],
    ['three garbage parts', () => 'Bearer a.b.c'],
    ['the token twice', () => `Bearer ${token} ${token}`],
    ['Basic with the client credentials', () => `Basic ${Buffer.from('a:b').toString('base64')}`],
    ['latin1 bytes', () => 'Bearer \u00e9\u00ff\u00a0x'],
    [
      'UTF-8 bytes of a non-ASCII token',
      () => Buffer.from('Bearer 令牌🔑', 'utf8').toString('latin1'),
    ],
    ['a 12 KiB token (under the header limit)', () => `Bearer ${'A'.repeat(12 * 1024)}`],
    ['alg none', () => `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`],
    ['alg none with the real kid', () => `Bearer ${b64({ alg: 'none', kid })}.${b64(claims())}.`],
    [
      'a tampered signature',
      () => {
        const [header, payload, signature] = token.split('.');
        const middle = signature.length >> 1;
        const flipped = signature[middle] === 'A' ? 'B' : 'A';
        return `Bearer ${header}.${payload}.${signature.slice(0, middle)}${flipped}${signature.slice(middle + 1)}`;
      },
    ],
    [
      'a payload changed after signing',
      () => {
        const [header, , signature] = token.split('.');
        return `Bearer ${header}.${b64({ ...claims(), exp: now() + 3600 })}.${signature}`;
      },
    ],
    [
      'expired, signed with the real key',
      async () =>
        `Bearer ${await new SignJWT({ ...claims(), iat: now() - 7200, exp: now() - 60 })
          .setProtectedHeader({ alg: 'ES256', kid })
          .sign(serverKey)}`,
    ],
  ];

  it.each(malformed)('%s → 401 with an OperationOutcome, nothing stored', async (_name, header) => {
    const before = await storedVersions(server);
    await expectUnauthorized(await write(await header()), before);
  });

  it('a header past the 16 KiB limit of the HTTP parser → 431 with an OperationOutcome', async () => {
    const before = await storedVersions(server);
    const answer = await write(`Bearer ${'A'.repeat(20 * 1024)}`);
    expectOutcome(answer, [431]);
    expect(await storedVersions(server)).toBe(before);
  });

  it('random header values: 401 unless it is the real token after a Bearer scheme', async () => {
    const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR', 'Basic', 'Token', '');
    const separator = fc.constantFrom(' ', '   ', '', ':', '=');
    const credential = fc.oneof(
      fc.constant(token),
      headerText,
      base64urlText(400).map((text) => `${text}.${text}.${text}`),
    );
    const header = fc.oneof(
      headerText,
      fc.tuple(scheme, separator, credential).map(([s, sep, c]) => ({ s, sep, c })),
    );
    const tally = await tryInputs(
      `Authorization header values (${engine})`,
      header,
      async (value, tally) => {
        const text = typeof value === 'string' ? value : value.s + value.sep + value.c;
        const valid =
          typeof value !== 'string' &&
          value.s.toLowerCase() === 'bearer' &&
          /^ +$/.test(value.sep) &&
          value.c === token;
        const before = await storedVersions(server);
        const answer = await write(text);
        if (valid) await expectStored(answer, before);
        else await expectUnauthorized(answer, before);
        tally.add(valid ? 'stored' : 'refused 401');
      },
      150,
    );
    expect(tally.count('refused 401')).toBeGreaterThan(0);
  });

  it('every small mutation of a real token is refused; the token itself is not', async () => {
    // A signature's last base64url character carries padding bits: changing it may leave the
    // decoded bytes as they were, so it is never the one flipped. Every other character counts.
    const mutation: fc.Arbitrary<Mutation> = fc.oneof(
      fc.record({
        kind: fc.constant('flip' as const),
        at: fc.nat(),
        to: fc.constantFrom(...BASE64URL),
      }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), to: headerChar }),
      fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
      fc.record({ kind: fc.constant('swap parts' as const) }),
      fc.record({ kind: fc.constant('no signature' as const) }),
      fc.record({ kind: fc.constant('none' as const) }),
    );
    const mutate = (m: Mutation): string => {
      const at = (n: number) => ('at' in m ? m.at % n : 0);
      switch (m.kind) {
        case 'flip': {
          const i = at(token.length - 1);
          const to = m.to === token[i] ? (m.to === 'A' ? 'B' : 'A') : m.to;
          return token.slice(0, i) + to + token.slice(i + 1);
        }
        case 'delete': {
          const i = at(token.length);
          return token.slice(0, i) + token.slice(i + 1);
        }
        case 'insert': {
          const i = at(token.length + 1);
          return token.slice(0, i) + m.to + token.slice(i);
        }
        case 'truncate':
          return token.slice(0, at(token.length));
        case 'swap parts': {
          const [header, payload, signature] = token.split('.');
          return `${payload}.${header}.${signature}`;
        }
        case 'no signature':
          return token.slice(0, token.lastIndexOf('.') + 1);
        default:
          return token;
      }
    };
    const tally = await tryInputs(
      `mutated real tokens (${engine})`,
      mutation,
      async (m, tally) => {
        const mutated = mutate(m);
        const before = await storedVersions(server);
        const answer = await write(`Bearer ${mutated}`);
        // Inserting a space or a tab at either end leaves the header's token as it was.
        if (mutated.trim() === token) await expectStored(answer, before);
        else await expectUnauthorized(answer, before);
        tally.add(mutated.trim() === token ? 'stored' : 'refused 401');
      },
      150,
    );
    expect(tally.count('refused 401')).toBeGreaterThan(0);
  });

  it('random JWTs (any alg, kid and claims; random or no signature) are refused', async () => {
    const jwtHeader = fc.record(
      {
        alg: fc.oneof(fc.constantFrom('none', 'ES256', 'HS256', 'RS256', 'None', ''), fc.string()),
        kid: fc.oneof(fc.constant(kid), fc.string(), fc.integer(), fc.constant(null)),
        typ: fc.constantFrom('JWT', 'jwt', ''),
        crit: fc.array(fc.string(), { maxLength: 2 }),
      },
      { requiredKeys: [] },
    );
    const jwtPayload = fc.record(
      {
        iss: fc.constantFrom('graphir', 'someone-else', ''),
        sub: fc.oneof(fc.constant('client'), fc.string(), fc.integer()),
        project: fc.oneof(fc.string(), fc.constant(null)),
        scope: fc.constantFrom('system/*.cruds', 'system/*.*', '', 'user/*.*'),
        admin: fc.boolean(),
        exp: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(4102444800)),
      },
      { requiredKeys: [] },
    );
    const signature = fc.oneof(fc.constant(''), base64urlText(120));
    const jwt = fc
      .tuple(jwtHeader, jwtPayload, signature)
      .map(([header, payload, sig]) => `${b64(header)}.${b64(payload)}.${sig}`);
    const tally = await tryInputs(
      `random JWTs (${engine})`,
      jwt,
      async (value, tally) => {
        const before = await storedVersions(server);
        await expectUnauthorized(await write(`Bearer ${value}`), before);
        tally.add('refused 401');
      },
      100,
    );
    expect(tally.count('refused 401')).toBeGreaterThan(0);
  });
});

describe.each(await availableEngines())('hostile values on the admin API on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  /** Admin calls as JSON with the project's token (or the root token for new projects). */
  const admin = async (method: string, path: string, body?: unknown, root = false) =>
    send(`${server.url}/admin/projects${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${root ? await server.rootToken() : server.project.token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const project = () => `/${server.project.projectId}`;
  const clientCount = async () =>
    Number(
      (await server.db.query<{ n: number }>('SELECT count(*)::int AS n FROM client')).rows[0].n,
    );

  // U+0000 cannot be stored in PostgreSQL text: each of these once reached the database and
  // came back as 500.
  const cases: { name: string; method: string; path: () => string; body?: unknown; root?: true }[] =
    [
      {
        name: 'a project name',
        method: 'POST',
        path: () => '',
        body: { name: 'A\u0000' },
        root: true,
      },
      {
        name: 'a client name',
        method: 'POST',
        path: () => `${project()}/clients`,
        body: { name: 'c\u0000' },
      },
      { name: 'a client id', method: 'DELETE', path: () => `${project()}/clients/%00` },
      {
        name: 'a secret value',
        method: 'PUT',
        path: () => `${project()}/secrets/K`,
        body: { value: 'v\u0000' },
      },
      {
        name: 'a secret name',
        method: 'PUT',
        path: () => `${project()}/secrets/K%00`,
        body: { value: 'v' },
      },
      { name: 'a project id', method: 'POST', path: () => '/%00/clients', body: { name: 'c' } },
    ];
  it.each(cases)('$name holding U+0000 → 4xx with an OperationOutcome', async (c) => {
    const clients = await clientCount();
    expectOutcome(await admin(c.method, c.path(), c.body, c.root));
    expect(await clientCount()).toBe(clients);
  });
});

describe.each(await availableEngines())(
  'hostile requests to the token endpoint on %s',
  (engine) => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer(engine);
    });
    afterAll(() => server?.stop());

    const RFC6749_ERRORS = [
      'invalid_request',
      'invalid_client',
      'unsupported_grant_type',
      'invalid_scope',
    ];
    const tokenCall = (body: string, headers: Record<string, string> = {}) =>
      send(`${server.url}/oauth2/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    /** A refusal as RFC 6749 §5.2 shapes it: 400 or 401 and `{"error"}` from its list. */
    const expectOAuthError = (answer: Answer) => {
      const context = `${answer.status} ${answer.text.slice(0, 300)}`;
      expect([400, 401], context).toContain(answer.status);
      expect(RFC6749_ERRORS, context).toContain(answer.body?.error);
      expect(answer.headers.get('cache-control'), context).toBe('no-store');
    };
    const expectToken = (answer: Answer) => {
      expect(answer.status, answer.text.slice(0, 300)).toBe(200);
      expect(answer.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) });
    };
    const basic = (id: string, secret: string) =>
      `Basic ${Buffer.from(`${id}:${secret}`, 'utf8').toString('base64')}`;

    it.each([
      [
        'a client id holding U+0000 in the form',
        'grant_type=client_credentials&client_id=%00&client_secret=x',
        {},
      ],
      [
        'a client id holding U+0000 in Basic',
        'grant_type=client_credentials',
        { Authorization: basic('%00', 'x') },
      ],
      [
        'a broken escape in Basic',
        'grant_type=client_credentials',
        { Authorization: basic('%E0%A4%A', 'x') },
      ],
      ['a lone % in Basic', 'grant_type=client_credentials', { Authorization: basic('a', '%') }],
      [
        'Basic without a colon',
        'grant_type=client_credentials',
        { Authorization: `Basic ${Buffer.from('ab').toString('base64')}` },
      ],
      ['Basic that is not base64', 'grant_type=client_credentials', { Authorization: 'Basic !!!' }],
    ] as [string, string, Record<string, string>][])(
      '%s → an RFC 6749 error',
      async (_name, body, headers) => expectOAuthError(await tokenCall(body, headers)),
    );

    it('random forms (repeated, empty and bracketed keys): a token only for exactly the right fields', async () => {
      const { clientId, clientSecret } = server.project;
      const key = fc.constantFrom(
        'grant_type',
        'client_id',
        'client_secret',
        'scope',
        '',
        'grant_type[]',
        'client_id[x]',
        '__proto__',
        'constructor',
      );
      const value = fc.oneof(
        fc.constantFrom('client_credentials', clientId, clientSecret, '', 'system/*.cruds'),
        fc.string({ unit: 'binary', maxLength: 40 }),
      );
      /** The exact fields, each once, then up to 5 hostile pairs, in any order. */
      const form = fc
        .tuple(
          fc.subarray([
            ['grant_type', 'client_credentials'],
            ['client_id', clientId],
            ['client_secret', clientSecret],
          ] as [string, string][]),
          fc.array(fc.tuple(key, value), { maxLength: 5 }),
          fc.nat(),
        )
        .map(([exact, hostile, shift]) => {
          const pairs = [...exact, ...hostile];
          const cut = pairs.length === 0 ? 0 : shift % pairs.length;
          return [...pairs.slice(cut), ...pairs.slice(0, cut)];
        });
      const tally = await tryInputs(
        `token endpoint forms (${engine})`,
        form,
        async (pairs, tally) => {
          const once = (name: string, wanted: string) => {
            const found = pairs.filter(([k]) => k === name);
            return found.length === 1 && found[0][1] === wanted;
          };
          const scope = pairs.filter(([k]) => k === 'scope');
          // A token needs each field exactly once (a repeated key is a list, and no field) and no
          // bracketed spelling of them; an empty scope is no scope, `system/*.cruds` is the grant.
          const valid =
            once('grant_type', 'client_credentials') &&
            once('client_id', clientId) &&
            once('client_secret', clientSecret) &&
            !pairs.some(([k]) => k.includes('[')) &&
            (scope.length === 0 ||
              (scope.length === 1 && ['', 'system/*.cruds'].includes(scope[0][1])));
          const body = pairs
            .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
            .join('&');
          const answer = await tokenCall(body);
          if (valid) expectToken(answer);
          else expectOAuthError(answer);
          tally.add(valid ? 'token' : `refused ${answer.status}`);
        },
        150,
      );
      expect(tally.count('token')).toBeGreaterThan(0);
      expect(tally.count('refused 400') + tally.count('refused 401')).toBeGreaterThan(0);
    });

    it('random Basic credentials (any bytes, escaped or not): a token only for the real ones', async () => {
      const { clientId, clientSecret } = server.project;
      const part = (real: string) =>
        fc.oneof(
          fc.constant(real),
          fc.string({ unit: 'binary', maxLength: 40 }),
          fc.stringMatching(/^(%[0-9A-Fa-f]{0,2}|[a-z:])*$/),
        );
      const credentials = fc.record({
        id: part(clientId),
        secret: part(clientSecret),
        escaped: fc.boolean(),
      });
      const tally = await tryInputs(
        `token endpoint Basic credentials (${engine})`,
        credentials,
        async ({ id, secret, escaped }, tally) => {
          const encode = escaped ? encodeURIComponent : (text: string) => text;
          const answer = await tokenCall('grant_type=client_credentials', {
            Authorization: basic(encode(id), encode(secret)),
          });
          // Unescaped, an id with ':' or '%' is read differently; the real ones hold neither.
          const valid = id === clientId && secret === clientSecret;
          if (valid) expectToken(answer);
          else expectOAuthError(answer);
          tally.add(valid ? 'token' : `refused ${answer.status}`);
        },
        60, // each authentication costs a scrypt hash (tens of milliseconds)
      );
      expect(tally.count('token')).toBeGreaterThan(0);
    });
  },
);

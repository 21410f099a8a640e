/** The admin API (projects, clients, bot secrets) and the root client's bootstrap. */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../runtime/server/config.js';
import { startServer } from '../../runtime/server/server.js';
import { availableEngines, createTestDatabase } from '../support/test-databases.js';
import { startTestServer, type Project, type TestServer } from '../support/test-server.js';
import { expectOutcome, scopedClient, tokenRequest } from './helpers.js';

type Caller = 'root' | 'admin' | 'plain' | 'none';
const TEXT = { 'Content-Type': 'text/plain' };
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

describe.each(await availableEngines())('admin API on %s', (engine) => {
  let server: TestServer;
  let other: Project;
  /** A client of the test project with full FHIR access but no admin rights. */
  let plain: { clientId: string; clientSecret: string; token: string };
  beforeAll(async () => {
    server = await startTestServer(engine);
    other = await server.createProject('Other');
    const { projectId, token } = server.project;
    plain = await scopedClient(server, projectId, token, 'system/*.cruds');
  });
  afterAll(() => server?.stop());

  const count = async (table: 'project' | 'client' | 'project_secret') => {
    const { rows } = await server.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table}`,
    );
    return Number(rows[0].n);
  };
  const tokenOf = async (caller: Caller) =>
    ({
      root: await server.rootToken(),
      admin: server.project.token,
      plain: plain.token,
      none: undefined,
    })[caller];
  /** POST (PUT for secrets) under /admin as `caller`. */
  const admin = async (
    path: string,
    caller: Caller,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    server.call(`/admin${path}`, {
      method: path.includes('/secrets/') ? 'PUT' : 'POST',
      token: await tokenOf(caller),
      body,
      headers,
    });
  const grantedScope = async (clientId: string, clientSecret: string) => {
    const form = {
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    };
    return (await (await tokenRequest(server, form)).json()).scope;
  };
  const mine = () => server.project.projectId;

  it('root creates a project with a full-access admin client', async () => {
    const response = await admin('/projects', 'root', { name: 'Acme' });
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(Object.keys(body).sort()).toEqual(['clientId', 'clientSecret', 'projectId']);
    const { rows } = await server.db.query('SELECT name FROM project WHERE id = $1', [
      body.projectId,
    ]);
    expect(rows).toEqual([{ name: 'Acme' }]);
    const token = await server.token(body.clientId, body.clientSecret);
    expect((await server.fhir('/Patient', { token })).status).toBe(200);
    // … and that client administers its project.
    const client = await server.call(`/admin/projects/${body.projectId}/clients`, {
      method: 'POST',
      token,
      body: { name: 'x', scope: 'system/Patient.r' },
    });
    expect(client.status).toBe(201);
  });

  it.each([
    ['a project token', 'admin', { name: 'X' }, 403, 'forbidden'],
    ['no token', 'none', { name: 'X' }, 401, 'login'],
    ['a missing name', 'root', {}, 400, 'required'],
    ['an empty name', 'root', { name: '  ' }, 400, 'required'],
    ['a name that is a number', 'root', { name: 7 }, 400, 'required'],
    ['a JSON array', 'root', [{ name: 'X' }], 400, 'structure'],
    ['malformed JSON', 'root', '{"name":', 400, 'structure'],
    ['a text/plain body', 'root', 'name=X', 415, 'not-supported', TEXT],
    ['a form body', 'root', 'name=X', 415, 'not-supported', FORM],
  ] as [string, Caller, unknown, number, string, Record<string, string>?][])(
    'POST /admin/projects with %s: %i, nothing stored',
    async (_name, caller, body, status, code, headers) => {
      const before = [await count('project'), await count('client')];
      await expectOutcome(await admin('/projects', caller, body, headers), status, code);
      expect([await count('project'), await count('client')]).toEqual(before);
    },
  );

  it.each(['root', 'admin'] as Caller[])(
    '%s adds a client whose token carries the given scope',
    async (caller) => {
      const scope = 'system/Patient.rs system/Bot.r';
      const response = await admin(`/projects/${mine()}/clients`, caller, {
        name: 'reader',
        scope,
      });
      expect(response.status).toBe(201);
      const body = await response.json();
      expect(Object.keys(body).sort()).toEqual(['clientId', 'clientSecret']);
      expect(await grantedScope(body.clientId, body.clientSecret)).toBe(
        'system/Bot.r system/Patient.rs',
      );
    },
  );

  it.each([
    [undefined, 'system/*.cruds'],
    ['system/*.read', 'system/*.rs'],
    ['system/Observation.write system/Patient.*', 'system/Observation.cud system/Patient.cruds'],
  ])('a client made with scope %j is granted %j', async (scope, granted) => {
    const response = await admin(`/projects/${mine()}/clients`, 'admin', { name: 'c', scope });
    expect(response.status).toBe(201);
    const { clientId, clientSecret } = await response.json();
    const { rows } = await server.db.query('SELECT scope, admin FROM client WHERE id = $1', [
      clientId,
    ]);
    expect(rows).toEqual([{ scope: granted, admin: false }]);
    expect(await grantedScope(clientId, clientSecret)).toBe(granted);
  });

  const good = { name: 'x', scope: 'system/Patient.r' };
  it.each([
    ['a non-admin client', 'plain', () => mine(), good, 403, 'forbidden'],
    ["another project's admin", 'admin', () => other.projectId, good, 404, 'not-found'],
    ['root, for an unknown project', 'root', () => 'no-such-project', good, 404, 'not-found'],
    ['an admin, for an unknown project', 'admin', () => 'no-such-project', good, 404, 'not-found'],
    ['no token', 'none', () => mine(), good, 401, 'login'],
    [
      'an admin, with no name',
      'admin',
      () => mine(),
      { scope: 'system/Patient.r' },
      400,
      'required',
    ],
    ...['system/Patient.sr', 'patient/*.read', 'system/Patient.x', '', 42].map((scope) => [
      `an admin, with the scope ${JSON.stringify(scope)}`,
      'admin',
      () => mine(),
      { name: 'x', scope },
      400,
      typeof scope === 'string' && scope !== '' ? 'invalid' : 'required',
    ]),
  ] as [string, Caller, () => string, unknown, number, string][])(
    'POST clients by %s: %i, nothing stored',
    async (_name, caller, project, body, status, code) => {
      const before = await count('client');
      await expectOutcome(
        await admin(`/projects/${project()}/clients`, caller, body),
        status,
        code,
      );
      expect(await count('client')).toBe(before);
    },
  );

  it.each([
    ["another project's client", () => other.clientId, 'admin', 404, 'not-found'],
    ['an unknown client', () => 'no-such-client', 'admin', 404, 'not-found'],
    [
      'its admin client, by a non-admin caller',
      () => server.project.clientId,
      'plain',
      403,
      'forbidden',
    ],
  ] as [string, () => string, Caller, number, string][])(
    'DELETE %s: %i, every client keeps working',
    async (_name, client, caller, status, code) => {
      const path = `/admin/projects/${mine()}/clients/${client()}`;
      const response = await server.call(path, { method: 'DELETE', token: await tokenOf(caller) });
      await expectOutcome(response, status, code);
      expect((await server.fhir('/Patient', { token: other.token })).status).toBe(200);
      expect((await server.fhir('/Patient')).status).toBe(200);
    },
  );

  it.each(['root', 'admin'] as Caller[])('%s puts a secret: 201, then 200', async (caller) => {
    const name = `API_KEY.${caller}-1`;
    const path = `/projects/${mine()}/secrets/${name}`;
    const first = await admin(path, caller, { value: 'one' });
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ name });
    expect((await admin(path, caller, { value: 'two' })).status).toBe(200);
    const { rows } = await server.db.query(
      'SELECT value FROM project_secret WHERE project_id = $1 AND name = $2',
      [mine(), name],
    );
    expect(rows).toEqual([{ value: 'two' }]);
  });

  const value = { value: 'v' };
  it.each([
    ['a name with a space', 'admin', () => mine(), 'a%20b', value, 400, 'invalid'],
    ['a name with a slash', 'admin', () => mine(), 'a%2Fb', value, 400, 'invalid'],
    ['a name of 101 characters', 'admin', () => mine(), 'x'.repeat(101), value, 400, 'invalid'],
    // Strings, booleans and numbers are secrets (test/bots/execute.test.ts); nothing else.
    ...[null, { v: 1 }, ['x'], undefined].map((v) => [
      `the value ${JSON.stringify(v)}`,
      'admin',
      () => mine(),
      'OK',
      { value: v },
      400,
      'invalid',
    ]),
    ['a text body', 'admin', () => mine(), 'OK', 'value', 415, 'not-supported', TEXT],
    ['a non-admin client', 'plain', () => mine(), 'OK', value, 403, 'forbidden'],
    ["another project's admin", 'admin', () => other.projectId, 'OK', value, 404, 'not-found'],
    ['root, for an unknown project', 'root', () => 'nope', 'OK', value, 404, 'not-found'],
    ['no token', 'none', () => mine(), 'OK', value, 401, 'login'],
  ] as [string, Caller, () => string, string, unknown, number, string, Record<string, string>?][])(
    'PUT a secret with %s: %i, nothing stored',
    async (_name, caller, project, name, body, status, code, headers) => {
      const before = await count('project_secret');
      const response = await admin(`/projects/${project()}/secrets/${name}`, caller, body, headers);
      await expectOutcome(response, status, code);
      expect(await count('project_secret')).toBe(before);
    },
  );

  // Regression test: a narrowed admin token must not mint clients wider than itself.
  it('an admin token narrowed to system/Patient.r cannot mint a full-access client', async () => {
    const { clientId, clientSecret } = server.project;
    const token = await server.token(clientId, clientSecret, 'system/Patient.r');
    const before = await count('client');
    const body = { name: 'escalate', scope: 'system/*.cruds' };
    const response = await server.call(`/admin/projects/${mine()}/clients`, {
      method: 'POST',
      token,
      body,
    });
    await expectOutcome(response, 403, 'forbidden');
    expect(await count('client')).toBe(before);
  });

  it('stores client secrets only as scrypt hashes', async () => {
    const made = [server.project, other, plain];
    const { rows } = await server.db.query<{ id: string; secret_hash: string }>(
      'SELECT id, secret_hash FROM client',
    );
    expect(rows.length).toBeGreaterThan(made.length);
    for (const row of rows)
      expect(row.secret_hash).toMatch(/^scrypt\$16384\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    for (const { clientId, clientSecret } of [
      ...made,
      { clientId: 'test-root', clientSecret: 'test-root-secret' },
    ]) {
      const row = rows.find((r) => r.id === clientId)!;
      expect(row.secret_hash).not.toContain(clientSecret);
      expect(row.secret_hash).not.toContain(Buffer.from(clientSecret).toString('base64url'));
    }
    expect(new Set(rows.map((r) => r.secret_hash)).size).toBe(rows.length);
  });
});

describe.each(await availableEngines())('root client bootstrap on %s', (engine) => {
  it('prints a new root secret once; a second server on the same store prints nothing', async () => {
    const database = await createTestDatabase(engine);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const config = loadConfig({ PORT: '0', HOST: '127.0.0.1' });
    const first = await startServer(config, { db: database.db });
    try {
      expect(log).toHaveBeenCalledTimes(1);
      const match = /client_id=(\S+) client_secret=(\S+)/.exec(String(log.mock.calls[0][0]));
      expect(match).not.toBeNull();
      const [, clientId, clientSecret] = match!;

      const tokenFor = (secret: string) =>
        fetch(`${first.url}/oauth2/token`, {
          method: 'POST',
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: clientId,
            client_secret: secret,
          }),
        });
      const granted = await tokenFor(clientSecret);
      expect(granted.status).toBe(200);
      const { access_token } = (await granted.json()) as { access_token: string };
      const project = await fetch(`${first.url}/admin/projects`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${access_token}` },
        body: JSON.stringify({ name: 'First' }),
      });
      expect(project.status).toBe(201);

      const { rows } = await database.db.query<{ secret_hash: string }>(
        'SELECT secret_hash FROM client WHERE id = $1',
        [clientId],
      );
      expect(rows[0].secret_hash).toMatch(/^scrypt\$/);
      expect(rows[0].secret_hash).not.toContain(clientSecret);

      log.mockClear();
      const second = await startServer(config, { db: database.db });
      await second.close();
      expect(log).not.toHaveBeenCalled();
      expect((await tokenFor(`${clientSecret}x`)).status).toBe(401);
    } finally {
      log.mockRestore();
      await first.close();
      await database.drop();
    }
  });
});

describe('scopes naming unknown resource types', () => {
  it('are refused when creating a client (400) and when narrowing a token (invalid_scope)', async () => {
    const server = await startTestServer('pglite');
    try {
      const created = await server.call(`/admin/projects/${server.project.projectId}/clients`, {
        method: 'POST',
        body: { name: 'typo', scope: 'system/Patinet.rs' },
        token: server.project.token,
      });
      expect(created.status).toBe(400);
      expect((await created.json()).issue[0].diagnostics).toMatch(/Patinet is not a resource type/);
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: server.project.clientId,
        client_secret: server.project.clientSecret,
        scope: 'system/Dragon.r',
      });
      const token = await fetch(`${server.url}/oauth2/token`, { method: 'POST', body: form });
      expect(token.status).toBe(400);
      expect(await token.json()).toMatchObject({ error: 'invalid_scope' });
    } finally {
      await server.stop();
    }
  });
});

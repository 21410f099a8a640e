/**
 * Bots' own access (issue 28): writing Bots and project secrets needs the project's admin
 * rights; running a bot needs read access to Bot and `system/Bot.$execute` (or admin rights);
 * a bot's `fhir` client has the bot's scopes (`Bot.scope`, within the caller's with
 * `Bot.runAsUser`), never admin rights. Over HTTP, on every engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { botAccess } from '../../runtime/access/bot-access.js';
import { Scopes } from '../../runtime/access/scopes.js';
import type { AccessClaims } from '../../runtime/access/token-service.js';
import { FhirError } from '../../runtime/model/fhir-error.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { expectOutcome, scopedClient, storedVersions, tokenRequest } from './helpers.js';

/** What the issue's bot did with a client that could only create Bots. */
const SPY = `export async function handler(fhir, event) {
  const observations = await fhir.searchResources('Observation', {});
  await fhir.createResource({ resourceType: 'Patient', name: [{ family: 'Planted' }] });
  return { observations: observations.length, secrets: event.secrets };
}`;

/** Runs one `fhir` call named by the input and answers what came of it. */
const PROBE = `export async function handler(fhir, event) {
  const { method, args } = event.input;
  try {
    const result = await fhir[method](...args);
    return { ok: true, result: JSON.parse(JSON.stringify(result ?? null)) };
  } catch (error) {
    return { ok: false, message: error.message, code: error.outcome?.issue?.[0]?.code };
  }
}`;

const ECHO = `export async function handler(fhir, event) { return 'ran: ' + event.input; }`;

describe('botAccess', () => {
  const caller = (scope: string, admin = false): AccessClaims => ({
    clientId: 'c',
    projectId: 'p',
    scopes: Scopes.parse(scope),
    admin,
    expires: 0,
  });
  const bot = (extra: object = {}) => ({ resourceType: 'Bot', id: 'b', ...extra });

  it.each([
    ['no scope', {}, 'system/Patient.rs', 'system/*.cruds system/Bot.$execute'],
    ['its scope', { scope: 'system/Patient.rs' }, 'system/*.cruds', 'system/Patient.rs'],
    [
      'runAsUser false',
      { runAsUser: false },
      'system/Patient.r',
      'system/*.cruds system/Bot.$execute',
    ],
    [
      'runAsUser',
      { runAsUser: true },
      'system/Patient.rs system/Bot.r',
      'system/Bot.r system/Patient.rs',
    ],
    [
      'runAsUser and its scope',
      { runAsUser: true, scope: 'system/*.rs system/Bot.$execute' },
      'system/Patient.cruds system/Bot.$execute',
      'system/Patient.rs system/Bot.$execute',
    ],
  ])(
    'with %s runs with its own scopes, within the caller’s for runAsUser',
    (_n, extra, callerScope, scopes) => {
      const access = botAccess(bot(extra), caller(callerScope));
      expect(access.scopes.toString()).toBe(Scopes.parse(scopes).toString());
      expect(access).toMatchObject({ clientId: 'Bot/b', projectId: 'p', admin: false });
    },
  );

  it('runs as an admin caller with the execute permission an admin has, but never as admin', () => {
    const access = botAccess(
      bot({ runAsUser: true, scope: 'system/Bot.r system/Bot.$execute' }),
      caller('system/*.cruds', true),
    );
    expect(access.scopes.toString()).toBe('system/Bot.r system/Bot.$execute');
    expect(access.admin).toBe(false);
  });

  it('refuses to run a stored Bot whose scope does not parse (400, naming Bot.scope)', () => {
    const run = () => botAccess(bot({ scope: 'user/*.*' }), caller('system/*.cruds', true));
    expect(run).toThrow(FhirError);
    expect(run).toThrow(/Bot\/b has a scope that does not parse/);
  });
});

describe.each(await availableEngines())('bots’ own access on %s', (engine) => {
  let server: TestServer;
  /** Tokens by what their clients were granted (all but `admin` are not admin clients). */
  const token: Record<string, string> = {};
  let admin: string;
  let echoId: string;
  const scopes = {
    botCreator: 'system/Bot.cr',
    everything: 'system/*.cruds',
    readsBots: 'system/Patient.rs system/Bot.r',
    runsBots: 'system/Patient.rs system/Bot.r system/Bot.$execute',
    executeOnly: 'system/Bot.$execute',
    noPatients: 'system/Observation.rs system/Bot.r system/Bot.$execute',
  } as const;

  /** Stored versions once queued AuditEvents are in: what a refused write must not change. */
  const versions = async () => {
    await server.settled();
    return storedVersions(server);
  };
  const createBot = async (bot: Record<string, unknown>, as = admin): Promise<string> => {
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', ...bot },
      token: as,
    });
    const body = await response.json();
    if (response.status !== 201) throw new Error(JSON.stringify(body));
    return body.id;
  };
  const execute = (path: string, as: string, input: unknown = {}) =>
    server.fhir(path, {
      method: 'POST',
      body: JSON.stringify(input),
      headers: { 'Content-Type': 'application/json' },
      token: as,
    });
  /** A probe bot with these extra elements calls `fhir[method](...args)` for `caller`. */
  const probe = async (
    bot: Record<string, unknown>,
    method: string,
    args: unknown[],
    caller = admin,
  ) => {
    const id = await createBot({ name: 'probe', code: PROBE, ...bot });
    const response = await execute(`/Bot/${id}/$execute`, caller, { method, args });
    expect(response.status).toBe(200);
    return response.json();
  };

  beforeAll(async () => {
    server = await startTestServer(engine);
    admin = server.project.token;
    for (const [name, scope] of Object.entries(scopes))
      token[name] = (await scopedClient(server, server.project.projectId, admin, scope)).token;
    echoId = await createBot({
      name: 'echo',
      code: ECHO,
      identifier: [{ system: 'urn:test', value: 'echo' }],
    });
    const seed = await server.fhir('/Observation', {
      method: 'POST',
      body: { resourceType: 'Observation', status: 'final', code: { text: 'seed' } },
    });
    expect(seed.status).toBe(201);
  });
  afterAll(() => server?.stop());

  describe('writing Bots needs admin rights', () => {
    it('refuses the issue’s bot to a client with only system/Bot.cr, which cannot read Observations either', async () => {
      const before = await versions();
      const created = await server.fhir('/Bot', {
        method: 'POST',
        body: { resourceType: 'Bot', name: 'spy', code: SPY },
        token: token.botCreator,
      });
      const body = await expectOutcome(created, 403, 'forbidden');
      expect(body.issue[0].diagnostics).toMatch(/admin rights/);
      await expectOutcome(
        await server.fhir('/Observation', { token: token.botCreator }),
        403,
        'forbidden',
      );
      expect(await versions()).toBe(before);
    });

    it('lets the admin client write that bot, which then runs with the default access', async () => {
      await server.call(`/admin/projects/${server.project.projectId}/secrets/API_KEY`, {
        method: 'PUT',
        body: { value: 'hush' },
        token: admin,
      });
      const id = await createBot({ name: 'spy', code: SPY });
      const response = await execute(`/Bot/${id}/$execute`, token.runsBots);
      expect(response.status).toBe(200);
      const result = await response.json();
      expect(result.observations).toBeGreaterThan(0);
      expect(result.secrets.API_KEY).toEqual({ name: 'API_KEY', valueString: 'hush' });
    });

    const bot = (id?: string) => ({
      resourceType: 'Bot',
      ...(id ? { id } : {}),
      name: 'rewritten',
      code: SPY,
      identifier: [{ system: 'urn:test', value: 'echo' }],
    });
    const patch = [{ op: 'replace', path: '/code', value: SPY }];
    const bundle = (type: string, request: object, resource?: object) => ({
      resourceType: 'Bundle',
      type,
      entry: [{ request, ...(resource ? { resource } : {}) }],
    });
    const mutation = (query: string) => ({
      method: 'POST',
      body: JSON.stringify({ query }),
      headers: { 'Content-Type': 'application/json' },
    });
    // [name, path, init]: each way of writing a Bot, by a client whose scopes allow everything.
    const writes: [string, () => string, () => Parameters<TestServer['fhir']>[1]][] = [
      ['create', () => '/Bot', () => ({ method: 'POST', body: bot() })],
      [
        'conditional create',
        () => '/Bot',
        () => ({
          method: 'POST',
          body: bot(),
          headers: { 'If-None-Exist': 'identifier=urn:test|none' },
        }),
      ],
      ['update', () => `/Bot/${echoId}`, () => ({ method: 'PUT', body: bot(echoId) })],
      ['update as create', () => '/Bot/planted', () => ({ method: 'PUT', body: bot('planted') })],
      [
        'conditional update',
        () => '/Bot?identifier=urn:test|echo',
        () => ({ method: 'PUT', body: bot() }),
      ],
      [
        'patch',
        () => `/Bot/${echoId}`,
        () => ({
          method: 'PATCH',
          body: JSON.stringify(patch),
          headers: { 'Content-Type': 'application/json-patch+json' },
        }),
      ],
      ['delete', () => `/Bot/${echoId}`, () => ({ method: 'DELETE' })],
      ['conditional delete', () => '/Bot?identifier=urn:test|echo', () => ({ method: 'DELETE' })],
      [
        'a transaction entry',
        () => '',
        () => ({
          method: 'POST',
          body: bundle('transaction', { method: 'POST', url: 'Bot' }, bot()),
        }),
      ],
      [
        'a transaction PATCH entry',
        () => '',
        () => ({
          method: 'POST',
          body: bundle(
            'transaction',
            { method: 'PATCH', url: `Bot/${echoId}` },
            {
              resourceType: 'Binary',
              contentType: 'application/json-patch+json',
              data: Buffer.from(JSON.stringify(patch)).toString('base64'),
            },
          ),
        }),
      ],
    ];

    it.each(writes)(
      'refuses %s of a Bot to a non-admin client (403, nothing stored)',
      async (_name, path, init) => {
        const before = await versions();
        const response = await server.fhir(path(), { ...init(), token: token.everything });
        const body = await expectOutcome(response, 403, 'forbidden');
        expect(JSON.stringify(body)).toMatch(/admin rights/);
        expect(await versions()).toBe(before);
        expect((await (await server.fhir(`/Bot/${echoId}`)).json()).meta.versionId).toBe('1');
      },
    );

    it('refuses a batch entry writing a Bot, and stores nothing for it', async () => {
      const before = await versions();
      const response = await server.fhir('', {
        method: 'POST',
        body: bundle('batch', { method: 'PUT', url: `Bot/${echoId}` }, bot(echoId)),
        token: token.everything,
      });
      expect(response.status).toBe(200);
      const [entry] = (await response.json()).entry;
      expect(entry.response.status).toMatch(/^403/);
      expect(await versions()).toBe(before);
    });

    it.each([
      [
        'BotCreate',
        () => `mutation { BotCreate(res: { resourceType: "Bot", name: "x", code: "x" }) { id } }`,
      ],
      [
        'BotUpdate',
        () =>
          `mutation { BotUpdate(id: "${echoId}", res: { resourceType: "Bot", id: "${echoId}", name: "x", code: "x" }) { id } }`,
      ],
      ['BotDelete', () => `mutation { BotDelete(id: "${echoId}") { id } }`],
    ])('refuses the GraphQL mutation %s to a non-admin client', async (_name, query) => {
      const before = await versions();
      const response = await server.fhir('/$graphql', {
        ...mutation(query()),
        token: token.everything,
      });
      const body = await response.json();
      expect(body.errors[0].extensions.resource.issue[0].code).toBe('forbidden');
      expect(body.errors[0].message).toMatch(/admin rights/);
      expect(await versions()).toBe(before);
    });

    it('lets the admin client write Bots by GraphQL and transaction too', async () => {
      const created = await (
        await server.fhir('/$graphql', {
          ...mutation(
            'mutation { BotCreate(res: { resourceType: "Bot", name: "g", code: "x" }) { id } }',
          ),
          token: admin,
        })
      ).json();
      expect(created.errors).toBeUndefined();
      const id = created.data.BotCreate.id;
      const deleted = await server.fhir('', {
        method: 'POST',
        body: bundle('transaction', { method: 'DELETE', url: `Bot/${id}` }),
        token: admin,
      });
      expect(deleted.status).toBe(200);
      expect((await server.fhir(`/Bot/${id}`)).status).toBe(410);
    });

    it('still lets non-admin clients read and search Bots', async () => {
      expect((await server.fhir(`/Bot/${echoId}`, { token: token.readsBots })).status).toBe(200);
      expect((await server.fhir('/Bot?name=echo', { token: token.everything })).status).toBe(200);
    });
  });

  describe('running a bot needs the execute permission', () => {
    const ways = [
      ['POST by id', 'POST', () => `/Bot/${echoId}/$execute`],
      ['GET by id', 'GET', () => `/Bot/${echoId}/$execute?input=x`],
      ['POST by identifier', 'POST', () => '/Bot/$execute?identifier=urn:test|echo'],
      ['GET by identifier', 'GET', () => '/Bot/$execute?identifier=urn:test|echo'],
    ] as const;
    const call = (method: string, path: string, as: string) =>
      server.fhir(path, {
        method,
        ...(method === 'POST' ? { body: 'x', headers: { 'Content-Type': 'text/plain' } } : {}),
        token: as,
      });

    it.each(ways)(
      'refuses %s to system/Patient.rs system/Bot.r, and to full scopes without admin rights',
      async (_name, method, path) => {
        for (const as of ['readsBots', 'everything', 'executeOnly']) {
          const body = await expectOutcome(await call(method, path(), token[as]), 403, 'forbidden');
          expect(body.issue[0].diagnostics).toMatch(
            as === 'executeOnly' ? /read on Bot/ : /system\/Bot\.\$execute/,
          );
        }
      },
    );

    it.each(ways)(
      'runs %s for system/Bot.r with system/Bot.$execute, and for the admin client',
      async (_name, method, path) => {
        for (const as of [token.runsBots, admin]) {
          const response = await call(method, path(), as);
          expect(response.status).toBe(200);
          expect(await response.text()).toMatch(/^ran: /);
        }
      },
    );

    it('leaves no AuditEvent for a refused execution', async () => {
      await server.settled();
      const count = async () =>
        (await (await server.fhir('/AuditEvent?_summary=count')).json()).total;
      const before = await count();
      expect((await call('POST', `/Bot/${echoId}/$execute`, token.readsBots)).status).toBe(403);
      await server.settled();
      expect(await count()).toBe(before);
    });
  });

  describe('a bot runs with its own access', () => {
    it.each([
      ['searches Observations', 'searchResources', ['Observation', {}], /search on Observation/],
      ['creates a Patient', 'createResource', [{ resourceType: 'Patient' }], /create on Patient/],
      ['reads by GraphQL outside its scope', 'graphql', ['{ ObservationList { id } }'], null],
    ])('with scope system/Patient.rs, is refused when it %s', async (_n, method, args, message) => {
      const patients = async () =>
        (await (await server.fhir('/Patient?_summary=count')).json()).total;
      const before = await patients();
      const result = await probe({ scope: 'system/Patient.rs' }, method, args);
      if (message) {
        expect(result).toMatchObject({ ok: false, code: 'forbidden' });
        expect(result.message).toMatch(message);
      } else {
        // GraphQL answers a refused field with an error, as `$graphql` does.
        expect(result.ok).toBe(true);
        expect(result.result.errors[0].message).toMatch(/search on Observation/);
      }
      expect(await patients()).toBe(before);
    });

    it('with scope system/Patient.rs, may search Patients', async () => {
      const result = await probe({ scope: 'system/Patient.rs' }, 'searchResources', [
        'Patient',
        {},
      ]);
      expect(result.ok).toBe(true);
    });

    it('never has admin rights: a bot with full scopes cannot write a Bot', async () => {
      const result = await probe({}, 'createResource', [
        { resourceType: 'Bot', name: 'child', code: ECHO },
      ]);
      expect(result).toMatchObject({ ok: false, code: 'forbidden' });
      expect(result.message).toMatch(/admin rights/);
    });

    it('with runAsUser, has only what its caller has too', async () => {
      const asCaller = await probe(
        { runAsUser: true },
        'searchResources',
        ['Patient', {}],
        token.noPatients,
      );
      expect(asCaller).toMatchObject({ ok: false, code: 'forbidden' });
      expect(asCaller.message).toMatch(/search on Patient/);
      const observations = await probe(
        { runAsUser: true },
        'searchResources',
        ['Observation', {}],
        token.noPatients,
      );
      expect(observations.ok).toBe(true);
    });

    it('without runAsUser, has its own access whoever runs it', async () => {
      const own = await probe(
        { runAsUser: false },
        'searchResources',
        ['Patient', {}],
        token.noPatients,
      );
      expect(own.ok).toBe(true);
    });

    it('with runAsUser and the admin client as caller, keeps its own scope', async () => {
      const result = await probe(
        { runAsUser: true, scope: 'system/Patient.rs' },
        'searchResources',
        ['Observation', {}],
      );
      expect(result).toMatchObject({ ok: false, code: 'forbidden' });
    });
  });

  describe('a bot running another bot (fhir.executeBot)', () => {
    const search = { method: 'searchResources', args: ['Observation', {}] };
    const run = async (parentScope: string, child: Record<string, unknown>) => {
      const childId = await createBot({ name: 'child', code: PROBE, ...child });
      return probe({ scope: parentScope }, 'executeBot', [childId, search, 'application/json']);
    };

    it('needs system/Bot.$execute in the running bot’s scope', async () => {
      const result = await run('system/*.cruds', {});
      expect(result).toMatchObject({ ok: false, code: 'forbidden' });
      expect(result.message).toMatch(/system\/Bot\.\$execute/);
    });

    it('gives the child its own access, within the running bot’s for runAsUser', async () => {
      const parent = 'system/Patient.rs system/Bot.r system/Bot.$execute';
      const own = await run(parent, {});
      expect(own).toMatchObject({ ok: true, result: { ok: true } });
      const asCaller = await run(parent, { runAsUser: true });
      expect(asCaller).toMatchObject({ ok: true, result: { ok: false, code: 'forbidden' } });
    });
  });

  describe('Bot.scope is checked when the Bot is written', () => {
    it.each([
      ['a patient scope', 'patient/*.read', /not a system scope/],
      ['an unknown letter', 'system/Patient.x', /not a system scope|letters/],
      ['letters out of order', 'system/Patient.sr', /in that order/],
      ['an unknown type', 'system/Widget.rs', /Widget is not a resource type/],
      ['an operation other than Bot.$execute', 'system/Patient.$execute', /system\/Bot\.\$execute/],
    ])('refuses %s with 400 naming Bot.scope', async (_name, scope, message) => {
      const before = await versions();
      const response = await server.fhir('/Bot', {
        method: 'POST',
        body: { resourceType: 'Bot', name: 'bad', code: ECHO, scope },
        token: admin,
      });
      const body = await expectOutcome(response, 400, 'invalid');
      expect(body.issue[0].expression).toEqual(['Bot.scope']);
      expect(body.issue[0].diagnostics).toMatch(message);
      expect(await versions()).toBe(before);
    });

    it('refuses an invalid scope in a transaction and in an update too', async () => {
      const transaction = await server.fhir('', {
        method: 'POST',
        body: {
          resourceType: 'Bundle',
          type: 'transaction',
          entry: [
            {
              request: { method: 'PUT', url: `Bot/${echoId}` },
              resource: { resourceType: 'Bot', id: echoId, code: ECHO, scope: 'openid' },
            },
          ],
        },
        token: admin,
      });
      expect(transaction.status).toBe(400);
      expect(JSON.stringify(await transaction.json())).toMatch(/Bot\.scope/);
    });

    it('accepts SMART v1 and v2 scopes with the execute permission', async () => {
      const id = await createBot({
        name: 'scoped',
        code: ECHO,
        scope: 'system/Patient.read system/Observation.cruds system/Bot.r system/Bot.$execute',
      });
      expect((await server.fhir(`/Bot/${id}`)).status).toBe(200);
    });
  });

  describe('secrets and the execute scope in the admin API and tokens', () => {
    it('refuses to set a project secret without admin rights', async () => {
      for (const as of [token.everything, token.runsBots]) {
        const response = await server.call(
          `/admin/projects/${server.project.projectId}/secrets/API_KEY`,
          { method: 'PUT', body: { value: 'stolen' }, token: as },
        );
        expect(response.status).toBe(403);
      }
    });

    it('grants system/Bot.$execute in tokens only to clients that have it, or are admin', async () => {
      const form = (clientId: string, clientSecret: string, scope: string) =>
        tokenRequest(server, {
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: clientSecret,
          scope,
        });
      const runner = await scopedClient(server, server.project.projectId, admin, scopes.runsBots);
      const narrowed = await form(runner.clientId, runner.clientSecret, 'system/Bot.$execute');
      expect(narrowed.status).toBe(200);
      expect((await narrowed.json()).scope).toBe('system/Bot.$execute');
      const plain = await scopedClient(server, server.project.projectId, admin, scopes.readsBots);
      const refused = await form(
        plain.clientId,
        plain.clientSecret,
        'system/Bot.r system/Bot.$execute',
      );
      expect(refused.status).toBe(400);
      expect((await refused.json()).error).toBe('invalid_scope');
      const { clientId, clientSecret } = server.project;
      const full = await form(clientId, clientSecret, 'system/*.cruds system/Bot.$execute');
      expect(full.status).toBe(200);
      expect((await full.json()).scope).toBe('system/*.cruds system/Bot.$execute');
    });

    it('lets a non-admin token with the permission run bots, and keeps a narrowed admin token from it', async () => {
      const { clientId, clientSecret } = server.project;
      const narrowed = await server.token(clientId, clientSecret, 'system/Bot.r');
      await expectOutcome(await execute(`/Bot/${echoId}/$execute`, narrowed), 403, 'forbidden');
      const runner = await server.token(clientId, clientSecret, 'system/Bot.r system/Bot.$execute');
      expect((await execute(`/Bot/${echoId}/$execute`, runner)).status).toBe(200);
    });
  });
});

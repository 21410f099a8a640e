/**
 * The `fhir` client a bot gets behaves as MedplumClient (issue 28): each method run by a bot
 * over `$execute`, its effect checked through REST; Medplum's return shapes; failures that name
 * the method, carry the OperationOutcome and keep the bot's line in their stack; bots calling
 * bots; the bot's access enforced inside.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scopes } from '../../runtime/access/scopes.js';
import { EgressClient } from '../../runtime/egress/egress-client.js';
import { AuditLog } from '../../runtime/bots/audit-log.js';
import { BotRunner } from '../../runtime/bots/bot-runner.js';
import type { ClientRegistry } from '../../runtime/access/client-registry.js';
import { ProjectScheduler } from '../../runtime/bots/project-scheduler.js';
import { SandboxPool } from '../../runtime/bots/sandbox-pool.js';
import { loadConfig, requestLimits } from '../../runtime/server/config.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** A bot's scope that lets it run other bots (docs/bots.md, Access). */
const RUNS_BOTS = 'system/*.cruds system/Bot.$execute';

describe('the fhir client of a bot', () => {
  let server: TestServer;
  const createBot = async (
    code: string,
    identifier?: { system: string; value: string },
    extra: object = {},
  ) => {
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: {
        resourceType: 'Bot',
        name: 'test',
        code,
        ...(identifier ? { identifier: [identifier] } : {}),
        ...extra,
      },
    });
    const body = await response.json();
    if (response.status !== 201) throw new Error(JSON.stringify(body));
    return body.id as string;
  };
  /** Runs `code` once with a JSON input; the response's status and JSON body. */
  const runBot = async (code: string, input: unknown = {}, extra: object = {}) => {
    const id = await createBot(code, undefined, extra);
    const response = await server.fhir(`/Bot/${id}/$execute`, {
      method: 'POST',
      body: JSON.stringify(input),
      headers: { 'Content-Type': 'application/json' },
    });
    return { status: response.status, body: await response.json() };
  };

  beforeAll(async () => {
    server = await startTestServer('pglite');
  });
  afterAll(() => server?.stop());

  it('reads, writes, searches and keeps history with Medplum’s shapes', async () => {
    const { status, body } = await runBot(`export async function handler(fhir) {
      const created = await fhir.createResource({ resourceType: 'Patient', name: [{ family: 'Shape' }], active: true });
      const read = await fhir.readResource('Patient', created.id);
      const byReference = await fhir.readReference({ reference: 'Patient/' + created.id });
      const updated = await fhir.updateResource({ ...read, active: false });
      const patched = await fhir.patchResource('Patient', created.id, [{ op: 'replace', path: '/active', value: true }]);
      const history = await fhir.readHistory('Patient', created.id);
      const first = await fhir.readVersion('Patient', created.id, '1');
      const bundle = await fhir.search('Patient', 'family=Shape');
      const one = await fhir.searchOne('Patient', { family: 'Shape' });
      const none = await fhir.searchOne('Patient', { family: 'Nobody' });
      const array = await fhir.searchResources('Patient', [['family', 'Shape']]);
      return {
        id: created.id, read: read.id, byReference: byReference.id,
        versions: [updated.meta.versionId, patched.meta.versionId, patched.active],
        history: [history.resourceType, history.type, history.total, history.entry.length],
        first: [first.meta.versionId, first.active],
        bundle: [bundle.resourceType, bundle.type, bundle.entry.length, bundle.link.some((l) => l.relation === 'self')],
        one: one.id, none: none === undefined ? 'undefined' : none,
        array: [Array.isArray(array), array.length, array[0].id, array.bundle.resourceType, array.bundle.type],
      };
    }`);
    expect(status).toBe(200);
    const { id } = body;
    expect(body).toEqual({
      id,
      read: id,
      byReference: id,
      versions: ['2', '3', true],
      history: ['Bundle', 'history', 3, 3],
      first: ['1', true],
      bundle: ['Bundle', 'searchset', 1, true],
      one: id,
      none: 'undefined',
      array: [true, 1, id, 'Bundle', 'searchset'],
    });
    const stored = await (await server.fhir(`/Patient/${id}`)).json();
    expect(stored).toMatchObject({ active: true, meta: { versionId: '3' } });
  });

  it('creates if none exist, upserts, deletes and runs batches', async () => {
    const { status, body } = await runBot(`export async function handler(fhir) {
      const resource = { resourceType: 'Patient', identifier: [{ system: 'urn:once', value: '1' }] };
      const a = await fhir.createResourceIfNoneExist(resource, 'identifier=urn:once|1');
      const b = await fhir.createResourceIfNoneExist(resource, 'identifier=urn:once|1');
      const upserted = await fhir.upsertResource({ ...resource, identifier: [{ system: 'urn:up', value: '1' }], gender: 'male' }, { identifier: 'urn:up|1' });
      const again = await fhir.upsertResource({ ...resource, identifier: [{ system: 'urn:up', value: '1' }], gender: 'female' }, 'identifier=urn:up|1');
      const gone = await fhir.createResource({ resourceType: 'Patient' });
      await fhir.deleteResource('Patient', gone.id);
      const batch = await fhir.executeBatch({ resourceType: 'Bundle', type: 'batch', entry: [
        { request: { method: 'POST', url: 'Patient' }, resource: { resourceType: 'Patient', gender: 'other' } },
        { request: { method: 'GET', url: 'Patient/' + a.id } },
      ] });
      return { same: a.id === b.id, upsert: [upserted.id === again.id, again.gender, again.meta.versionId], gone: gone.id,
        batch: [batch.resourceType, batch.type, batch.entry.map((e) => e.response.status)] };
    }`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      same: true,
      upsert: [true, 'female', '2'],
      batch: ['Bundle', 'batch-response', ['201 Created', '200 OK']],
    });
    expect((await server.fhir(`/Patient/${body.gone}`)).status).toBe(410);
    const once = await (await server.fhir('/Patient?identifier=urn:once|1')).json();
    expect(once.total).toBe(1);
  });

  it('pages through a search with searchResourcePages', async () => {
    const { body } = await runBot(`export async function handler(fhir) {
      for (let i = 0; i < 5; i++) await fhir.createResource({ resourceType: 'Patient', name: [{ family: 'Paged' }] });
      const pages = [];
      for await (const page of fhir.searchResourcePages('Patient', { family: 'Paged', _count: 2 })) {
        pages.push([page.length, page.bundle.type]);
      }
      return pages;
    }`);
    expect(body).toEqual([
      [2, 'searchset'],
      [2, 'searchset'],
      [1, 'searchset'],
    ]);
  });

  it('takes graphql(query, operationName, variables) in Medplum’s order, and Graphir’s (query, variables, operationName)', async () => {
    const { status, body } = await runBot(`export async function handler(fhir) {
      const p = await fhir.createResource({ resourceType: 'Patient', name: [{ family: 'Graph' }] });
      const query = 'query A($id: ID!) { Patient(id: $id) { id } } query B { PatientList(family: "Graph") { id } }';
      const a = await fhir.graphql(query, 'A', { id: p.id });
      const b = await fhir.graphql(query, 'B');
      const c = await fhir.graphql(query, { id: p.id }, 'A');
      const bad = await fhir.graphql('{ Nope }').catch((e) => [e.message, e.outcome.issue[0].code]);
      return { a: a.data.Patient.id === p.id, b: b.data.PatientList.length, c: c.data, bad };
    }`);
    expect(status).toBe(200);
    expect(body.a).toBe(true);
    expect(body.b).toBeGreaterThanOrEqual(1);
    expect(body.c).toEqual({ Patient: { id: expect.any(String) } });
    expect(body.bad[0]).toMatch(/^fhir\.graphql: .*Nope/);
    expect(body.bad[1]).toBe('invalid');
  });

  it('gets, posts, puts and deletes paths under the FHIR base', async () => {
    const { status, body } = await runBot(`export async function handler(fhir, event) {
      const created = await fhir.post('fhir/R4/Patient', { resourceType: 'Patient', gender: 'male' });
      const read = await fhir.get('fhir/R4/Patient/' + created.id);
      const absolute = await fhir.get(event.baseUrl + 'fhir/R4/Patient/' + created.id);
      const put = await fhir.put('fhir/R4/Patient/' + created.id, { ...read, gender: 'female' });
      const searched = await fhir.get('fhir/R4/Patient?_id=' + created.id);
      const deleted = await fhir.delete('fhir/R4/Patient/' + created.id);
      const elsewhere = await fhir.get('https://example.org/x').catch((e) => e.message);
      const url = fhir.fhirUrl('Patient', created.id);
      return { same: read.id === created.id && absolute.id === created.id, put: put.gender, total: searched.total,
        deleted: deleted.resourceType, elsewhere, isUrl: url instanceof URL, url: String(url), base: fhir.getBaseUrl() === event.baseUrl };
    }`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      same: true,
      put: 'female',
      total: 1,
      deleted: 'OperationOutcome',
      base: true,
    });
    expect(body.elsewhere).toMatch(
      /^fhir\.get: https:\/\/example\.org\/x is not under the FHIR base/,
    );
    expect(body.isUrl).toBe(true);
    expect(body.url).toMatch(/\/fhir\/R4\/Patient\/[\w-]+$/);
  });

  it('stores a Binary and downloads it', async () => {
    const { status, body } = await runBot(`export async function handler(fhir) {
      const binary = await fhir.createBinary('héllo', 'hello.txt', 'text/plain');
      const fromOptions = await fhir.createBinary({ data: new Uint8Array([1, 2, 3]), contentType: 'application/octet-stream' });
      const blob = await fhir.download('Binary/' + binary.id);
      const downloaded = [blob instanceof Blob, blob.type, await blob.text()];
      return { binary, fromOptions: fromOptions.data, downloaded };
    }`);
    expect(status).toBe(200);
    expect(body.binary).toMatchObject({ resourceType: 'Binary', contentType: 'text/plain' });
    expect(body.fromOptions).toBe('AQID');
    const stored = await (await server.fhir(`/Binary/${body.binary.id}`)).json();
    expect(Buffer.from(stored.data, 'base64').toString()).toBe('héllo');
    expect(body.downloaded).toEqual([true, 'text/plain', 'héllo']);
  });

  it('names the method of a failed call, carries its outcome, and keeps the bot’s line', async () => {
    const caught = await runBot(`export async function handler(fhir) {
      try {
        await fhir.readResource('Patient', 'missing');
      } catch (e) {
        return { message: e.message, code: e.outcome.issue[0].code, stack: e.stack };
      }
    }`);
    expect(caught.body.message).toMatch(/^fhir\.readResource: .*missing/);
    expect(caught.body.code).toBe('not-found');
    expect(caught.body.stack).toMatch(/at handler \(bot\.mjs:3:/);
    const uncaught = await runBot(`export async function handler(fhir) {
      await fhir.searchOne('NoSuchType', {});
    }`);
    expect(uncaught.status).toBe(400);
    expect(uncaught.body.issue[0].diagnostics).toMatch(
      /^fhir\.searchOne: NoSuchType is not a resource type/,
    );
  });

  it('names the unsupported methods', async () => {
    const { body } = await runBot(`export async function handler(fhir) {
      const email = await fhir.sendEmail({ to: 'a@b.c' }).catch((e) => [e.message, e.stack]);
      const pdf = await fhir.createPdf({}).catch((e) => e.message);
      let profile;
      try { fhir.getProfile(); } catch (e) { profile = e.message; }
      return { email, pdf, profile, cached: fhir.getCached('Patient', 'x') === undefined };
    }`);
    expect(body.email[0]).toBe("fhir.sendEmail is not supported by Graphir's bot client");
    expect(body.email[1]).toMatch(/bot\.mjs:2:/);
    expect(body.pdf).toBe("fhir.createPdf is not supported by Graphir's bot client");
    expect(body.profile).toBe("fhir.getProfile is not supported by Graphir's bot client");
    expect(body.cached).toBe(true);
  });

  it('runs another bot of the project with executeBot, by id or identifier', async () => {
    const child = await createBot(
      `export async function handler(fhir, event) {
        return typeof event.input === 'string' ? 'text:' + event.input : { got: event.input, type: event.contentType };
      }`,
      { system: 'urn:bots', value: 'child' },
    );
    const parent = `export async function handler(fhir) {
      const json = await fhir.executeBot('${child}', { a: 1 }, 'application/json');
      const text = await fhir.executeBot({ system: 'urn:bots', value: 'child' }, 'hi');
      const resource = await fhir.executeBot('${child}', { resourceType: 'Patient' });
      const missing = await fhir.executeBot('nope', {}).catch((e) => [e.message, e.outcome.issue[0].code]);
      return { json, text, resource, missing };
    }`;
    const { status, body } = await runBot(parent, {}, { scope: RUNS_BOTS });
    expect(status).toBe(200);
    expect(body).toEqual({
      json: { got: { a: 1 }, type: 'application/json' },
      text: 'text:hi',
      resource: { got: { resourceType: 'Patient' }, type: 'application/fhir+json' },
      missing: [expect.stringMatching(/^fhir\.executeBot: /), 'not-found'],
    });
    // Without the execute permission in its scope, a bot runs no other bot.
    const refused = await runBot(parent, {}, { scope: 'system/*.cruds' });
    expect(refused.status).toBe(400);
    expect(refused.body.issue[0].diagnostics).toMatch(
      /^fhir\.executeBot: Running a bot needs the scope system\/Bot\.\$execute/,
    );
  });

  it('limits how deep bots call bots', async () => {
    const id = await createBot(
      `export async function handler(fhir, event) {
      const depth = event.input.depth;
      try {
        return await fhir.executeBot(event.bot.reference.split('/')[1], { depth: depth + 1 }, 'application/json');
      } catch (e) {
        return { depth, message: e.message };
      }
    }`,
      undefined,
      { scope: RUNS_BOTS },
    );
    const response = await server.fhir(`/Bot/${id}/$execute`, {
      method: 'POST',
      body: JSON.stringify({ depth: 0 }),
      headers: { 'Content-Type': 'application/json' },
    });
    const body = await response.json();
    expect(response.status).toBe(200);
    expect(body.depth).toBe(4);
    expect(body.message).toMatch(/^fhir\.executeBot: Bots may call bots at most 4 deep/);
  });
});

describe('bots calling bots with one worker', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('pglite', {
      GRAPHIR_BOT_WORKERS: '1',
      GRAPHIR_BOT_PROJECT_CONCURRENCY: '1',
    });
  });
  afterAll(() => server?.stop());

  it('finishes chains of bots, several at once, without waiting for the worker a parent holds', async () => {
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: {
        resourceType: 'Bot',
        name: 'chain',
        scope: RUNS_BOTS,
        code: `export async function handler(fhir, event) {
          const n = event.input.n;
          if (n === 0) return { n };
          return fhir.executeBot(event.bot.reference.split('/')[1], { n: n - 1 }, 'application/json');
        }`,
      },
    });
    const { id } = await response.json();
    const runs = await Promise.all(
      [3, 3, 2].map(async (n) => {
        const run = await server.fhir(`/Bot/${id}/$execute`, {
          method: 'POST',
          body: JSON.stringify({ n }),
          headers: { 'Content-Type': 'application/json' },
        });
        return [run.status, await run.json()];
      }),
    );
    expect(runs).toEqual([
      [200, { n: 0 }],
      [200, { n: 0 }],
      [200, { n: 0 }],
    ]);
  });
});

describe('a bot with narrower access', () => {
  let server: TestServer;
  let pool: SandboxPool;
  beforeAll(async () => {
    server = await startTestServer('pglite');
    pool = new SandboxPool({ size: 1 });
  });
  afterAll(async () => {
    await pool.close();
    await server?.stop();
  });

  it('is refused inside (403) what its access does not allow', async () => {
    const limits = requestLimits(loadConfig({}));
    const runner = new BotRunner({
      store: server.store,
      schema: server.schema,
      clients: { secrets: async () => ({}) } as unknown as ClientRegistry,
      pool,
      audit: new AuditLog(server.store),
      egress: new EgressClient(),
      searchLimits: limits.search,
      queryLimits: limits.query,
      botLimits: limits.bots,
      scheduler: new ProjectScheduler(limits.botsPerProject),
    });
    const { projectId } = server.project;
    const outcome = await runner.execute({
      projectId,
      bot: {
        resourceType: 'Bot',
        id: 'narrow',
        scope: 'system/Patient.rs',
        code: `export async function handler(fhir) {
          const read = await fhir.searchResources('Patient', {});
          const write = await fhir.createResource({ resourceType: 'Patient' }).catch((e) => [e.message, e.outcome.issue[0].code]);
          const batch = await fhir.executeBatch({ resourceType: 'Bundle', type: 'batch', entry: [
            { request: { method: 'POST', url: 'Patient' }, resource: { resourceType: 'Patient' } } ] });
          return { read: Array.isArray(read), write, batch: batch.entry[0].response.status };
        }`,
      },
      input: { kind: 'json', contentType: 'application/json', value: {} },
      callerId: 'test',
      headers: {},
      baseUrl: `${server.url}/`,
      caller: {
        clientId: 'test',
        projectId,
        scopes: Scopes.parse('system/*.cruds'),
        admin: true,
        expires: Infinity,
      },
    });
    expect(outcome).toMatchObject({
      status: 'ok',
      value: {
        read: true,
        write: [
          expect.stringMatching(/^fhir\.createResource: .*do not allow create on Patient/),
          'forbidden',
        ],
        batch: '403',
      },
    });
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const ECHO_ESM = `export async function handler(fhir, event) {
  const input = event.input;
  const kind = input === null ? 'null' : Array.isArray(input) ? 'array' : input instanceof Hl7Message ? 'hl7' : typeof input;
  console.log('echo', kind);
  const seen = { kind, input: kind === 'hl7' ? input.toString() : input, contentType: event.contentType, bot: event.bot, hasTrace: typeof event.traceId === 'string' };
  return seen;
}`;
const ECHO_CJS = `exports.handler = async (fhir, event) => ({ cjs: true, input: event.input });`;
const ADT = readFileSync('test/fixtures/hl7/adt-a01.hl7', 'utf8');

describe('Bot/$execute', () => {
  let server: TestServer;
  let echoId: string;
  const createBot = async (
    code: string,
    identifier?: { system: string; value: string },
    extra: object = {},
    token?: string,
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
      ...(token ? { token } : {}),
    });
    const body = await response.json();
    if (response.status !== 201) throw new Error(JSON.stringify(body));
    return body.id as string;
  };
  const run = (path: string, body?: string, contentType?: string, token?: string) =>
    server.fhir(path, {
      method: body === undefined ? 'GET' : 'POST',
      ...(body === undefined ? {} : { body, headers: { 'Content-Type': contentType! } }),
      ...(token ? { token } : {}),
    });
  /** AuditEvents stored, once those queued (written in batches after responses) are in. */
  const audits = async () => {
    await server.settled();
    return (await (await server.fhir('/AuditEvent?_summary=count')).json()).total as number;
  };

  beforeAll(async () => {
    server = await startTestServer('pglite');
    echoId = await createBot(ECHO_ESM, { system: 'urn:test', value: 'echo' });
  });
  afterAll(() => server?.stop());

  it.each([
    ['text/plain → string', 'hello', 'text/plain', 'string', 'hello'],
    ['text/plain with parameters and odd case', 'hé', 'Text/Plain; charset=UTF-8', 'string', 'hé'],
    [
      'application/json → object',
      '{"a":1,"b":[true]}',
      'application/json; charset=utf-8',
      'object',
      { a: 1, b: [true] },
    ],
    [
      'application/x-www-form-urlencoded → object of strings',
      'a=1&b=two&b=three&c=',
      'application/x-www-form-urlencoded',
      'object',
      { a: '1', b: 'two', c: '' },
    ],
    [
      'application/fhir+json → resource',
      '{"resourceType":"Patient","active":true}',
      'application/fhir+json',
      'object',
      { resourceType: 'Patient', active: true },
    ],
    [
      // As MedplumClient's executeBot(id, {…}) sends an object when given no content type.
      'application/fhir+json without resourceType → object',
      '{"name":"Eve","n":[1,{"x":null}]}',
      'application/fhir+json',
      'object',
      { name: 'Eve', n: [1, { x: null }] },
    ],
    [
      // Medplum's patient-intake bot is tested with such input: handed over, never validated.
      'application/fhir+json that would not be stored (an empty string) → as parsed',
      '{"resourceType":"QuestionnaireResponse","status":"completed","item":[{"linkId":"a","answer":[{"valueString":""}]}]}',
      'application/fhir+json',
      'object',
      {
        resourceType: 'QuestionnaireResponse',
        item: [{ linkId: 'a', answer: [{ valueString: '' }] }],
      },
    ],
    [
      'application/fhir+json with an element R4 does not define → as parsed',
      '{"resourceType":"Patient","nmae":1}',
      'application/fhir+json',
      'object',
      { resourceType: 'Patient', nmae: 1 },
    ],
    [
      'application/fhir+json whose resourceType is null → as parsed',
      '{"resourceType":null,"active":true}',
      'application/fhir+json',
      'object',
      { resourceType: null, active: true },
    ],
    [
      'a JSON array as application/fhir+json → as parsed',
      '[{"name":"Eve"}]',
      'application/fhir+json',
      'array',
      [{ name: 'Eve' }],
    ],
    [
      'x-application/hl7-v2+er7 → Hl7Message',
      ADT,
      'x-application/hl7-v2+er7',
      'hl7',
      ADT.replace(/\r?\n/g, '\r').replace(/\r$/, ''),
    ],
  ])('POST %s, by id and by identifier', async (_name, body, contentType, kind, input) => {
    for (const path of [`/Bot/${echoId}/$execute`, '/Bot/$execute?identifier=urn:test|echo']) {
      const response = await run(path, body, contentType);
      const result = JSON.parse(await response.text());
      expect(response.status, JSON.stringify(result)).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(result).toMatchObject({
        kind,
        input,
        contentType: contentType.split(';')[0].toLowerCase(),
        bot: { reference: `Bot/${echoId}` },
        hasTrace: true,
      });
    }
  });

  it('GET passes the query parameters (without identifier) as an object of strings', async () => {
    const result = await (await run('/Bot/$execute?identifier=urn:test|echo&name=Eve&n=1')).json();
    expect(result).toMatchObject({ kind: 'object', input: { name: 'Eve', n: '1' } });
    const byId = await (await run(`/Bot/${echoId}/$execute?x=y`)).json();
    expect(byId.input).toEqual({ x: 'y' });
  });

  it('runs CommonJS bots', async () => {
    const id = await createBot(ECHO_CJS);
    expect(await (await run(`/Bot/${id}/$execute`, '{"x":1}', 'application/json')).json()).toEqual({
      cjs: true,
      input: { x: 1 },
    });
  });

  it.each([
    ['a string', 'return "plain";', 'text/plain', (text: string) => expect(text).toBe('plain')],
    [
      'a FHIR resource',
      'return { resourceType: "Patient", active: true };',
      'application/fhir+json',
      (text: string) => expect(JSON.parse(text)).toEqual({ resourceType: 'Patient', active: true }),
    ],
    [
      'other JSON',
      'return [1, 2];',
      'application/json',
      (text: string) => expect(JSON.parse(text)).toEqual([1, 2]),
    ],
    [
      'nothing',
      'return;',
      'application/fhir+json',
      (text: string) => expect(JSON.parse(text).resourceType).toBe('OperationOutcome'),
    ],
    [
      'an Hl7Message (buildAck)',
      'return Hl7Message.parse(event.input.er7).buildAck();',
      'x-application/hl7-v2+er7',
      (text: string) => expect(text).toMatch(/^MSH\|.*\rMSA\|AA\|/s),
    ],
  ])(
    'answers a handler returning %s with the right Content-Type',
    async (_name, body, type, check) => {
      const id = await createBot(`export async function handler(fhir, event) { ${body} }`);
      // JSON input: an HL7 request's answer is ER7 whatever the value (hl7-bots.test.ts).
      const response = await run(
        `/Bot/${id}/$execute`,
        JSON.stringify({ er7: ADT }),
        'application/json',
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toContain(type);
      check(await response.text());
    },
  );

  it('gives the bot a fhir client with its project access, and the project secrets', async () => {
    await server.call(`/admin/projects/${server.project.projectId}/secrets/API_KEY`, {
      method: 'PUT',
      body: { value: 's3cret' },
      token: server.project.token,
    });
    const patient = await (
      await server.fhir('/Patient', {
        method: 'POST',
        body: { resourceType: 'Patient', gender: 'female' },
      })
    ).json();
    const id = await createBot(`export async function handler(fhir, event) {
      const read = await fhir.readResource('Patient', event.input.id);
      const found = await fhir.searchResources('Patient', { _id: event.input.id });
      const one = await fhir.searchOne('Patient', '_id=' + event.input.id);
      const created = await fhir.createResource({ resourceType: 'Observation', status: 'final', code: { text: 'from bot' } });
      const gql = await fhir.graphql('{ Patient(id: "' + event.input.id + '") { gender } }');
      return { read, found: found.length, one: one.id, created: created.id, gql: gql.data, secret: event.secrets.API_KEY };
    }`);
    const result = await (
      await run(`/Bot/${id}/$execute`, JSON.stringify({ id: patient.id }), 'application/json')
    ).json();
    expect(result.read).toEqual(patient);
    expect(result).toMatchObject({
      found: 1,
      one: patient.id,
      gql: { Patient: { gender: 'female' } },
      secret: { name: 'API_KEY', valueString: 's3cret' },
    });
    expect((await server.fhir(`/Observation/${result.created}`)).status).toBe(200);

    // Secrets are cached for a few seconds, but a change through this server shows at once.
    await server.call(`/admin/projects/${server.project.projectId}/secrets/API_KEY`, {
      method: 'PUT',
      body: { value: 'rotated' },
      token: server.project.token,
    });
    const secretBot = await createBot(
      'export async function handler(fhir, event) { return event.secrets.API_KEY.valueString; }',
    );
    expect(await (await run(`/Bot/${secretBot}/$execute`, '', 'text/plain')).text()).toBe(
      'rotated',
    );
  });

  it('gives the event Medplum’s requester, headers (without credentials) and baseUrl', async () => {
    const id = await createBot(
      'export async function handler(fhir, event) { return { requester: event.requester, headers: event.headers, baseUrl: event.baseUrl }; }',
    );
    const response = await server.fhir(`/Bot/${id}/$execute`, {
      method: 'POST',
      body: 'x',
      headers: { 'Content-Type': 'text/plain', 'X-Trace-Note': 'abc', Cookie: 'session=secret' },
    });
    expect(response.status).toBe(200);
    const event = await response.json();
    expect(event.requester).toEqual({ reference: `ClientApplication/${server.project.clientId}` });
    expect(event.baseUrl).toBe(`${server.url}/`);
    expect(event.headers).toMatchObject({ 'x-trace-note': 'abc', 'content-type': 'text/plain' });
    expect(event.headers.authorization).toBeUndefined();
    expect(event.headers.cookie).toBeUndefined();
  });

  it('gives secrets of every value type, and refuses a value of none of them', async () => {
    const secret = (name: string, value: unknown) =>
      server.call(`/admin/projects/${server.project.projectId}/secrets/${name}`, {
        method: 'PUT',
        body: { value },
        token: server.project.token,
      });
    for (const [name, value] of [
      ['S_TEXT', 'abc'],
      ['S_FLAG', true],
      ['S_COUNT', 42],
      ['S_RATE', 0.25],
    ] as const)
      expect((await secret(name, value)).status).toBeLessThan(300);
    for (const value of [{ a: 1 }, ['x'], null])
      expect((await secret('S_BAD', value)).status).toBe(400);
    const id = await createBot(
      'export async function handler(fhir, event) { const s = event.secrets; return [s.S_TEXT, s.S_FLAG, s.S_COUNT, s.S_RATE, s.S_BAD ?? null]; }',
    );
    const response = await run(`/Bot/${id}/$execute`, '', 'text/plain');
    expect(await response.json()).toEqual([
      { name: 'S_TEXT', valueString: 'abc' },
      { name: 'S_FLAG', valueBoolean: true },
      { name: 'S_COUNT', valueInteger: 42 },
      { name: 'S_RATE', valueDecimal: 0.25 },
      null,
    ]);
  });

  it('refuses, naming them, an identifier without a system that names two Bots (409)', async () => {
    const first = await createBot(ECHO_ESM, { system: 'urn:one', value: 'shared' });
    const second = await createBot(ECHO_ESM, { system: 'urn:two', value: 'shared' });
    const response = await run('/Bot/$execute?identifier=shared', 'x', 'text/plain');
    expect(response.status).toBe(409);
    const outcome = await response.json();
    expect(outcome.issue[0].code).toBe('duplicate');
    expect(outcome.issue[0].diagnostics).toContain(`Bot/${first}`);
    expect(outcome.issue[0].diagnostics).toContain(`Bot/${second}`);
    // With its system, each is named once and runs.
    expect((await run('/Bot/$execute?identifier=urn:one|shared', 'x', 'text/plain')).status).toBe(
      200,
    );
  });

  it('keeps one identifier per project (409) but lets each project have its own', async () => {
    const duplicate = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', code: 'x', identifier: [{ system: 'urn:test', value: 'echo' }] },
    });
    expect(duplicate.status).toBe(409);
    expect((await duplicate.json()).issue[0].code).toBe('duplicate');
    const other = await server.createProject('Other');
    await createBot(
      'export async function handler() { return "other project"; }',
      { system: 'urn:test', value: 'echo' },
      {},
      other.token,
    );
    const theirs = await run(
      '/Bot/$execute?identifier=urn:test|echo',
      'x',
      'text/plain',
      other.token,
    );
    expect(await theirs.text()).toBe('other project');
    const mine = await run('/Bot/$execute?identifier=urn:test|echo', 'x', 'text/plain');
    expect((await mine.json()).kind).toBe('string');
    expect((await run(`/Bot/${echoId}/$execute`, 'x', 'text/plain', other.token)).status).toBe(404);
  });

  it.each([
    ['no identifier', '/Bot/$execute', 'x', 'text/plain', 400],
    ['an unknown identifier', '/Bot/$execute?identifier=urn:test|nobody', 'x', 'text/plain', 404],
    ['an unknown id', '/Bot/does-not-exist/$execute', 'x', 'text/plain', 404],
    ['bad JSON', '/Bot/$execute?identifier=urn:test|echo', '{"a":', 'application/json', 400],
    [
      'HL7 that does not start with MSH',
      '/Bot/$execute?identifier=urn:test|echo',
      'PID|1||x',
      'x-application/hl7-v2+er7',
      400,
    ],
    [
      'an unsupported Content-Type',
      '/Bot/$execute?identifier=urn:test|echo',
      '<a/>',
      'application/xml',
      415,
    ],
  ])('refuses %s before any bot runs', async (_name, path, body, contentType, status) => {
    const before = await audits();
    const response = await run(path, body, contentType);
    expect(response.status).toBe(status);
    expect((await response.json()).resourceType).toBe('OperationOutcome');
    expect(await audits()).toBe(before);
  });

  it.each([
    ['throws', 'throw new Error("nope " + event.input);', 400, 'processing', /nope x/],
    ['loops past its time limit', 'while (true) {}', 408, 'timeout', /time limit/],
    [
      'loops after an await',
      'await fhir.searchResources("Patient", {}); for (;;) {}',
      408,
      'timeout',
      /time limit/,
    ],
    [
      'allocates past its memory limit',
      'const a = []; for (;;) a.push({ n: a.length, list: [1, 2, 3] });',
      400,
      'too-costly',
      /memory/,
    ],
  ])(
    'answers a bot that %s with an OperationOutcome, and audits it',
    async (_name, body, status, code, message) => {
      const id = await createBot(
        `export async function handler(fhir, event) { ${body} }`,
        undefined,
        { timeout: code === 'too-costly' ? 10 : 1 },
      );
      const before = await audits();
      const response = await run(`/Bot/${id}/$execute`, 'x', 'text/plain');
      expect(response.status).toBe(status);
      const outcome = await response.json();
      expect(outcome.issue[0]).toMatchObject({ code });
      expect(outcome.issue[0].diagnostics).toMatch(message);
      expect(await audits()).toBe(before + 1);
      expect((await server.fhir('/healthz'.replace('/healthz', '/metadata'))).status).toBe(200);
    },
  );

  it('writes an AuditEvent with outcome, duration and the console tail', async () => {
    await run(`/Bot/${echoId}/$execute`, 'audit me', 'text/plain');
    await server.settled();
    const bundle = await (await server.fhir(`/AuditEvent?_sort=-_lastUpdated&_count=1`)).json();
    const audit = bundle.entry[0].resource;
    expect(audit).toMatchObject({
      outcome: '0',
      entity: [{ what: { reference: `Bot/${echoId}` } }],
    });
    const details = Object.fromEntries(
      audit.entity[0].detail.map((d: { type: string; valueString: string }) => [
        d.type,
        d.valueString,
      ]),
    );
    expect(details.console).toContain('echo string');
    expect(Number(details['duration-ms'])).toBeGreaterThanOrEqual(0);
  });

  it('answers Prefer: respond-async with 202 and a Task that later holds the result', async () => {
    const response = await server.fhir(`/Bot/${echoId}/$execute`, {
      method: 'POST',
      body: 'later',
      headers: { 'Content-Type': 'text/plain', Prefer: 'respond-async' },
    });
    expect(response.status).toBe(202);
    const location = response.headers.get('content-location')!;
    expect(location).toMatch(/\/Task\/[^/]+$/);
    let task;
    for (let i = 0; i < 100; i++) {
      task = await (await server.fhir(location.slice(server.base.length))).json();
      if (task.status !== 'requested' && task.status !== 'in-progress') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(task.status).toBe('completed');
    const data = JSON.parse(
      Buffer.from(task.output[0].valueAttachment.data, 'base64').toString('utf8'),
    );
    expect(data).toMatchObject({ kind: 'string', input: 'later' });
  });

  it('cannot reach another project through the fhir client', async () => {
    const patient = await (
      await server.fhir('/Patient', { method: 'POST', body: { resourceType: 'Patient' } })
    ).json();
    const other = await server.createProject('Elsewhere');
    const id = await createBot(
      `export async function handler(fhir, event) {
        try { await fhir.readResource('Patient', event.input.id); return 'leaked'; } catch (e) { return 'refused: ' + e.message; }
      }`,
      undefined,
      {},
      other.token,
    );
    const answer = await (
      await run(
        `/Bot/${id}/$execute`,
        JSON.stringify({ id: patient.id }),
        'application/json',
        other.token,
      )
    ).text();
    expect(answer).toMatch(/^refused: .*not known/);
  });

  it('keeps answering other requests while a bot loops', async () => {
    const id = await createBot('export async function handler() { for (;;) {} }', undefined, {
      timeout: 2,
    });
    const looping = run(`/Bot/${id}/$execute`, 'x', 'text/plain');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Answered while the bot still loops: before its time limit ends the execution.
    const first = await Promise.race([
      server.fhir('/metadata').then((response) => `metadata ${response.status}`),
      looping.then((response) => `bot ${response.status}`),
    ]);
    expect(first).toBe('metadata 200');
    expect((await looping).status).toBe(408);
  });

  it('refuses an oversize body with 413 before any bot runs', async () => {
    const small = await startTestServer('pglite', { GRAPHIR_MAX_BODY_BYTES: '600' });
    try {
      const bot = await (
        await small.fhir('/Bot', {
          method: 'POST',
          body: { resourceType: 'Bot', code: 'exports.handler = () => 1' },
        })
      ).json();
      const response = await small.fhir(`/Bot/${bot.id}/$execute`, {
        method: 'POST',
        body: 'x'.repeat(1000),
        headers: { 'Content-Type': 'text/plain' },
      });
      expect(response.status).toBe(413);
      await small.settled();
      expect((await (await small.fhir('/AuditEvent?_summary=count')).json()).total).toBe(0);
    } finally {
      await small.stop();
    }
  });

  it('needs read access to Bot', async () => {
    const limited = await server.call(`/admin/projects/${server.project.projectId}/clients`, {
      method: 'POST',
      body: { name: 'no bots', scope: 'system/Patient.rs' },
      token: server.project.token,
    });
    const { clientId, clientSecret } = await limited.json();
    const token = await server.token(clientId, clientSecret);
    expect((await run(`/Bot/${echoId}/$execute`, 'x', 'text/plain', token)).status).toBe(403);
  });
});

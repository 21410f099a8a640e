/** SMART scopes: the parser (runtime/access/scopes.ts), then what they allow over HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScopeError, Scopes, type Interaction } from '../../runtime/access/scopes.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { entriesOf, expectOutcome, scopedClient, storedVersions } from './helpers.js';

const ALL: Interaction[] = ['c', 'r', 'u', 'd', 's'];
const allowed = (scopes: Scopes, type: string) =>
  ALL.filter((i) => scopes.allows(type, i)).join('');

describe('Scopes.parse', () => {
  // [text, allowed on Patient, allowed on Observation, normalized text]
  it.each([
    ['system/Patient.cruds', 'cruds', '', 'system/Patient.cruds'],
    ['system/Patient.rs', 'rs', '', 'system/Patient.rs'],
    ['system/Patient.c', 'c', '', 'system/Patient.c'],
    ['system/Patient.cd', 'cd', '', 'system/Patient.cd'],
    ['system/*.rs', 'rs', 'rs', 'system/*.rs'],
    ['system/*.cruds', 'cruds', 'cruds', 'system/*.cruds'],
    // SMART v1
    ['system/*.read', 'rs', 'rs', 'system/*.rs'],
    ['system/Observation.write', '', 'cud', 'system/Observation.cud'],
    ['system/Patient.*', 'cruds', '', 'system/Patient.cruds'],
    ['system/*.*', 'cruds', 'cruds', 'system/*.cruds'],
    // Several scopes add up, whatever the whitespace; the text is normalized and sorted.
    ['system/Patient.r system/Patient.s', 'rs', '', 'system/Patient.rs'],
    ['system/Patient.read\tsystem/Patient.write', 'cruds', '', 'system/Patient.cruds'],
    [' system/Patient.s  system/*.r\n', 'rs', 'r', 'system/*.r system/Patient.s'],
    ['system/Patient.rs system/Observation.c', 'rs', 'c', 'system/Observation.c system/Patient.rs'],
    ['', '', '', ''],
  ])('%j allows Patient %j, Observation %j, reads back as %j', (text, patient, obs, normal) => {
    const scopes = Scopes.parse(text);
    expect(allowed(scopes, 'Patient')).toBe(patient);
    expect(allowed(scopes, 'Observation')).toBe(obs);
    expect(scopes.toString()).toBe(normal);
    expect(Scopes.parse(scopes.toString()).toString()).toBe(normal);
  });

  it.each([
    ['system/Patient.sr', 'letters out of order'],
    ['system/Patient.rc', 'letters out of order'],
    ['system/Patient.rr', 'a letter twice'],
    ['system/Patient.x', 'an unknown letter'],
    ['system/Patient.crudsx', 'an unknown letter at the end'],
    ['system/Patient.readwrite', 'two v1 words run together'],
    ['system/Patient.', 'no permissions'],
    ['system/Patient', 'no dot'],
    ['system/patient.r', 'a lower-case type'],
    ['system/*.RS', 'upper-case letters'],
    ['patient/Patient.read', 'a patient scope'],
    ['user/*.cruds', 'a user scope'],
    ['openid', 'not a resource scope'],
    ['system/Patient.rs system/Bad', 'one bad scope among good ones'],
    ['system/Observation.rs?category=laboratory', 'a v2 query (not supported)'],
  ])('refuses %j (%s) with a ScopeError naming it', (text) => {
    expect(() => Scopes.parse(text)).toThrow(ScopeError);
    expect(() => Scopes.parse(text)).toThrow(text.split(' ').at(-1)!);
  });

  // [granted, requested, covered]
  it.each([
    ['system/*.cruds', 'system/Patient.rs', true],
    ['system/*.cruds', 'system/*.cruds', true],
    ['system/*.rs', 'system/Patient.r system/Observation.s', true],
    ['system/*.rs', 'system/Patient.c', false],
    ['system/Patient.rs', 'system/Patient.r', true],
    ['system/Patient.rs', 'system/Patient.rus', false],
    ['system/Patient.rs', 'system/Observation.r', false],
    ['system/Patient.rs', 'system/*.r', false],
    ['system/Patient.r system/Observation.r', 'system/*.r', false],
    ['system/*.r system/Patient.s', 'system/Patient.rs', true],
    ['system/*.read', 'system/*.rs', true],
    ['system/Patient.rs', '', true],
    ['', 'system/Patient.r', false],
  ] as const)('%j covers %j: %s', (have, want, covers) => {
    expect(Scopes.parse(have).covers(Scopes.parse(want))).toBe(covers);
  });
});

describe('the execute permission and combining scopes', () => {
  it.each([
    ['system/Bot.$execute', true, 'system/Bot.$execute'],
    ['system/Bot.r system/Bot.$execute', true, 'system/Bot.r system/Bot.$execute'],
    ['system/*.cruds system/Bot.$execute', true, 'system/*.cruds system/Bot.$execute'],
    ['system/*.cruds', false, 'system/*.cruds'],
    ['system/*.*', false, 'system/*.cruds'],
    ['system/Bot.cruds', false, 'system/Bot.cruds'],
  ])('%j grants $execute on Bot: %s, reads back as %j', (text, executes, normal) => {
    const scopes = Scopes.parse(text);
    expect(scopes.allows('Bot', '$execute')).toBe(executes);
    expect(scopes.allows('Patient', '$execute')).toBe(false);
    expect(scopes.toString()).toBe(normal);
    expect(Scopes.parse(normal).toString()).toBe(normal);
  });

  it.each([
    'system/Patient.$execute',
    'system/*.$execute',
    'system/Bot.$run',
    'system/Bot.$EXECUTE',
    'system/Bot.r$execute',
  ])('refuses %j, naming system/Bot.$execute or the scope', (text) => {
    expect(() => Scopes.parse(text)).toThrow(ScopeError);
    expect(() => Scopes.parse(text)).toThrow(text);
  });

  // [a, b, a ∩ b]
  it.each([
    ['system/*.cruds', 'system/Patient.rs', 'system/Patient.rs'],
    ['system/*.rs', 'system/*.cruds', 'system/*.rs'],
    ['system/*.rs', 'system/Patient.cruds', 'system/Patient.rs'],
    ['system/*.r system/Patient.cs', 'system/*.rs', 'system/*.r system/Patient.s'],
    ['system/Patient.rs', 'system/Observation.rs', ''],
    [
      'system/*.cruds system/Bot.$execute',
      'system/Bot.r system/Bot.$execute',
      'system/Bot.r system/Bot.$execute',
    ],
    ['system/*.cruds system/Bot.$execute', 'system/*.cruds', 'system/*.cruds'],
    ['', 'system/*.cruds', ''],
  ])('%j ∩ %j is %j, either way round', (a, b, both) => {
    expect(Scopes.parse(a).intersect(Scopes.parse(b)).toString()).toBe(both);
    expect(Scopes.parse(b).intersect(Scopes.parse(a)).toString()).toBe(both);
  });

  it('intersects to what both allow on every type', () => {
    const a = Scopes.parse('system/*.r system/Patient.cs system/Observation.u');
    const b = Scopes.parse('system/*.s system/Patient.cr system/Bot.$execute');
    const both = a.intersect(b);
    for (const type of ['Patient', 'Observation', 'Bot', 'Encounter'])
      for (const p of [...ALL, '$execute'] as const)
        expect(both.allows(type, p), `${type} ${p}`).toBe(a.allows(type, p) && b.allows(type, p));
  });

  it('unites and covers with the execute permission', () => {
    const full = Scopes.parse('system/*.cruds');
    const run = Scopes.parse('system/Bot.$execute');
    expect(full.union(run).toString()).toBe('system/*.cruds system/Bot.$execute');
    expect(full.covers(run)).toBe(false);
    expect(full.union(run).covers(Scopes.parse('system/Bot.r system/Bot.$execute'))).toBe(true);
  });
});

const fixtures = [
  { resourceType: 'Organization', id: 'org1', name: 'Acme' },
  { resourceType: 'Patient', id: 'p1', managingOrganization: { reference: 'Organization/org1' } },
  {
    resourceType: 'Observation',
    id: 'obs1',
    status: 'final',
    code: { text: 'x' },
    subject: { reference: 'Patient/p1' },
  },
];
const newPatient = { resourceType: 'Patient', name: [{ family: 'New' }] };
const transaction = (...entry: unknown[]) => ({
  resourceType: 'Bundle',
  type: 'transaction',
  entry,
});
const post = (resource: { resourceType: string }) => ({
  request: { method: 'POST', url: resource.resourceType },
  resource,
});

describe.each(await availableEngines())('scopes over HTTP on %s', (engine) => {
  let server: TestServer;
  const token: Record<string, string> = {};
  beforeAll(async () => {
    server = await startTestServer(engine);
    const put = fixtures.map((r) => ({
      request: { method: 'PUT', url: `${r.resourceType}/${r.id}` },
      resource: r,
    }));
    expect((await server.fhir('', { method: 'POST', body: transaction(...put) })).status).toBe(200);
    for (const scope of [
      'system/Patient.rs',
      'system/*.read',
      'system/Patient.c',
      'system/Patient.cs',
      'system/Patient.cruds',
      'system/Patient.rs system/Organization.r',
    ]) {
      token[scope] = (
        await scopedClient(server, server.project.projectId, server.project.token, scope)
      ).token;
    }
  });
  afterAll(() => server?.stop());

  const as = (scope: string, path: string, init: Parameters<TestServer['fhir']>[1] = {}) =>
    server.fhir(path, { ...init, token: token[scope] });

  const [R, V1, C, P] = [
    'system/Patient.rs',
    'system/*.read',
    'system/Patient.c',
    'system/Patient.cruds',
  ];
  type Init = Parameters<TestServer['fhir']>[1];
  const send = (method: string, body?: unknown, headers?: Record<string, string>): Init => ({
    method,
    body,
    headers,
  });
  const bundleGet = (url: string) =>
    transaction(post(newPatient), { request: { method: 'GET', url } });
  const observation = { ...fixtures[2], id: undefined } as any;

  it.each([
    [R, 'read a Patient', '/Patient/p1'],
    [R, 'search Patients', '/Patient?_id=p1'],
    [R, "read a Patient's history", '/Patient/p1/_history'],
    [R, 'vread a Patient', '/Patient/p1/_history/1'],
    [V1, 'read a Patient', '/Patient/p1'],
    [V1, 'read an Observation', '/Observation/obs1'],
    [V1, 'search Observations', '/Observation?subject=Patient/p1'],
  ])('%s may %s', async (scope, _what, path) => {
    expect((await as(scope, path)).status).toBe(200);
  });

  it.each([
    [R, 'create a Patient', '/Patient', send('POST', newPatient)],
    [R, 'update a Patient', '/Patient/p1', send('PUT', fixtures[1])],
    [
      R,
      'create a Patient by PUT',
      '/Patient/p9',
      send('PUT', { resourceType: 'Patient', id: 'p9' }),
    ],
    [R, 'delete a Patient', '/Patient/p1', send('DELETE')],
    [R, 'read an Observation', '/Observation/obs1'],
    [R, 'search Observations', '/Observation'],
    [R, "read an Observation's history", '/Observation/obs1/_history'],
    [R, 'create an Observation', '/Observation', send('POST', observation)],
    [V1, 'create a Patient', '/Patient', send('POST', newPatient)],
    [V1, 'update a Patient', '/Patient/p1', send('PUT', fixtures[1])],
    [V1, 'delete an Observation', '/Observation/obs1', send('DELETE')],
    [V1, 'run a transaction with a create', '', send('POST', transaction(post(newPatient)))],
    [C, 'read a Patient', '/Patient/p1'],
    [C, 'search Patients', '/Patient'],
    [
      C,
      'create with If-None-Exist',
      '/Patient',
      send('POST', newPatient, { 'If-None-Exist': 'family=New' }),
    ],
    [
      C,
      'create with ifNoneExist in a transaction',
      '',
      send(
        'POST',
        transaction({
          ...post(newPatient),
          request: { method: 'POST', url: 'Patient', ifNoneExist: 'family=New' },
        }),
      ),
    ],
    [
      P,
      'run a transaction with one Observation among Patients',
      '',
      send('POST', transaction(post(newPatient), post(observation), post(newPatient))),
    ],
    [P, 'read an Observation in a transaction', '', send('POST', bundleGet('Observation/obs1'))],
    [
      P,
      'search Observations in a transaction',
      '',
      send('POST', bundleGet('Observation?status=final')),
    ],
  ] as [string, string, string, Init?][])(
    '%s may not %s: 403, nothing stored',
    async (scope, _what, path, init) => {
      const before = await storedVersions(server, server.project.projectId);
      const outcome = await expectOutcome(await as(scope, path, init), 403, 'forbidden');
      expect(outcome.issue[0].diagnostics).toMatch(/scope/);
      expect(await storedVersions(server, server.project.projectId)).toBe(before);
    },
  );

  it('a token with create and search may create with If-None-Exist', async () => {
    const body = { resourceType: 'Patient', identifier: [{ system: 'urn:x', value: 'ine-1' }] };
    const init = { method: 'POST', body, headers: { 'If-None-Exist': 'identifier=urn:x|ine-1' } };
    const first = await as('system/Patient.cs', '/Patient', init);
    expect(first.status).toBe(201);
    const second = await as('system/Patient.cs', '/Patient', init);
    expect(second.status).toBe(200);
    expect((await second.json()).id).toBe((await first.json()).id);
  });

  it('a batch refuses only the entries outside the scopes', async () => {
    const response = await as('system/Patient.cruds', '', {
      method: 'POST',
      body: {
        resourceType: 'Bundle',
        type: 'batch',
        entry: [
          post(observation),
          post(newPatient),
          { request: { method: 'GET', url: 'Observation/obs1' } },
        ],
      },
    });
    expect(response.status).toBe(200);
    const bundle = await response.json();
    expect(bundle.entry.map((e: any) => e.response.status)).toEqual(['403', '201 Created', '403']);
    expect(bundle.entry[0].response.outcome.issue[0].code).toBe('forbidden');
    expect(JSON.stringify(bundle)).not.toContain('"resourceType":"Observation"');
  });

  it.each([
    [R, '_include=Patient:organization', ['match:Patient/p1']],
    [
      `${R} system/Organization.r`,
      '_include=Patient:organization',
      ['match:Patient/p1', 'include:Organization/org1'],
    ],
    [R, '_revinclude=Observation:subject', ['match:Patient/p1']],
    [V1, '_revinclude=Observation:subject', ['match:Patient/p1', 'include:Observation/obs1']],
  ] as [string, string, string[]][])(
    '%s searching Patient?%s sees %j',
    async (scope, query, expected) => {
      const response = await as(scope, `/Patient?_id=p1&${query}`);
      expect(response.status).toBe(200);
      expect(entriesOf(await response.json())).toEqual(expected);
    },
  );

  // Regression test: search entries of Bundles leave out included resources the token may not read.
  it.each(['batch', 'transaction'])(
    'a %s search entry leaves out included resources the token may not read',
    async (type) => {
      const response = await as('system/Patient.rs', '', {
        method: 'POST',
        body: {
          resourceType: 'Bundle',
          type,
          entry: [
            {
              request: {
                method: 'GET',
                url: 'Patient?_id=p1&_include=Patient:organization&_revinclude=Observation:subject',
              },
            },
          ],
        },
      });
      expect(response.status).toBe(200);
      const bundle = await response.json();
      expect(entriesOf(bundle.entry[0].resource)).toEqual(['match:Patient/p1']);
    },
  );
});

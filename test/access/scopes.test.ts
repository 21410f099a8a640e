/** SMART scopes: the parser (runtime/access/scopes.ts), then what they allow over HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScopeError, Scopes, type Interaction } from '../../runtime/access/scopes.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { entriesOf, expectOutcome, scopedClient, storedVersions } from './helpers.js';

const ALL: Interaction[] = ['c', 'r', 'u', 'd', 's'];
const allowed = (scopes: Scopes, type: string) => ALL.filter((i) => scopes.allows(type, i)).join('');

describe('Scopes.parse', () => {
  it.each([
    { text: 'system/Patient.cruds', patient: 'cruds', observation: '', normal: 'system/Patient.cruds' },
    { text: 'system/Patient.rs', patient: 'rs', observation: '', normal: 'system/Patient.rs' },
    { text: 'system/Patient.c', patient: 'c', observation: '', normal: 'system/Patient.c' },
    { text: 'system/Patient.cd', patient: 'cd', observation: '', normal: 'system/Patient.cd' },
    { text: 'system/*.rs', patient: 'rs', observation: 'rs', normal: 'system/*.rs' },
    { text: 'system/*.cruds', patient: 'cruds', observation: 'cruds', normal: 'system/*.cruds' },
    // SMART v1
    { text: 'system/*.read', patient: 'rs', observation: 'rs', normal: 'system/*.rs' },
    { text: 'system/Observation.write', patient: '', observation: 'cud', normal: 'system/Observation.cud' },
    { text: 'system/Patient.*', patient: 'cruds', observation: '', normal: 'system/Patient.cruds' },
    { text: 'system/*.*', patient: 'cruds', observation: 'cruds', normal: 'system/*.cruds' },
    // Several scopes add up, whatever the whitespace; the text is normalized and sorted.
    { text: 'system/Patient.r system/Patient.s', patient: 'rs', observation: '', normal: 'system/Patient.rs' },
    { text: 'system/Patient.read\tsystem/Patient.write', patient: 'cruds', observation: '', normal: 'system/Patient.cruds' },
    { text: ' system/Patient.s  system/*.r\n', patient: 'rs', observation: 'r', normal: 'system/*.r system/Patient.s' },
    { text: 'system/Patient.rs system/Observation.c', patient: 'rs', observation: 'c', normal: 'system/Observation.c system/Patient.rs' },
    { text: '', patient: '', observation: '', normal: '' },
  ])('"$text" allows Patient "$patient", Observation "$observation", reads back as "$normal"', ({ text, patient, observation, normal }) => {
    const scopes = Scopes.parse(text);
    expect(allowed(scopes, 'Patient')).toBe(patient);
    expect(allowed(scopes, 'Observation')).toBe(observation);
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
  ])('refuses "%s" (%s) with a ScopeError naming it', (text) => {
    expect(() => Scopes.parse(text)).toThrow(ScopeError);
    expect(() => Scopes.parse(text)).toThrow(text.split(' ').at(-1)!);
  });

  it.each([
    { have: 'system/*.cruds', want: 'system/Patient.rs', covers: true },
    { have: 'system/*.cruds', want: 'system/*.cruds', covers: true },
    { have: 'system/*.rs', want: 'system/Patient.r system/Observation.s', covers: true },
    { have: 'system/*.rs', want: 'system/Patient.c', covers: false },
    { have: 'system/Patient.rs', want: 'system/Patient.r', covers: true },
    { have: 'system/Patient.rs', want: 'system/Patient.rsu', covers: false },
    { have: 'system/Patient.rs', want: 'system/Observation.r', covers: false },
    { have: 'system/Patient.rs', want: 'system/*.r', covers: false },
    { have: 'system/Patient.r system/Observation.r', want: 'system/*.r', covers: false },
    { have: 'system/*.r system/Patient.s', want: 'system/Patient.rs', covers: true },
    { have: 'system/*.read', want: 'system/*.rs', covers: true },
    { have: 'system/Patient.rs', want: '', covers: true },
    { have: '', want: 'system/Patient.r', covers: false },
  ])('"$have" covers "$want": $covers', ({ have, want, covers }) => {
    expect(Scopes.parse(have).covers(Scopes.parse(want))).toBe(covers);
  });
});

const fixtures = [
  { resourceType: 'Organization', id: 'org1', name: 'Acme' },
  { resourceType: 'Patient', id: 'p1', managingOrganization: { reference: 'Organization/org1' } },
  { resourceType: 'Observation', id: 'obs1', status: 'final', code: { text: 'x' }, subject: { reference: 'Patient/p1' } },
];
const newPatient = { resourceType: 'Patient', name: [{ family: 'New' }] };
const transaction = (...entry: unknown[]) => ({ resourceType: 'Bundle', type: 'transaction', entry });
const post = (resource: { resourceType: string }) => ({ request: { method: 'POST', url: resource.resourceType }, resource });

describe.each(await availableEngines())('scopes over HTTP on %s', (engine) => {
  let server: TestServer;
  const token: Record<string, string> = {};
  beforeAll(async () => {
    server = await startTestServer(engine);
    const put = fixtures.map((r) => ({ request: { method: 'PUT', url: `${r.resourceType}/${r.id}` }, resource: r }));
    expect((await server.fhir('', { method: 'POST', body: transaction(...put) })).status).toBe(200);
    for (const scope of [
      'system/Patient.rs',
      'system/*.read',
      'system/Patient.c',
      'system/Patient.cs',
      'system/Patient.cruds',
      'system/Patient.rs system/Organization.r',
    ]) {
      token[scope] = (await scopedClient(server, server.project.projectId, server.project.token, scope)).token;
    }
  });
  afterAll(() => server?.stop());

  const as = (scope: string, path: string, init: Parameters<TestServer['fhir']>[1] = {}) =>
    server.fhir(path, { ...init, token: token[scope] });

  it.each([
    { scope: 'system/Patient.rs', what: 'read a Patient', path: '/Patient/p1' },
    { scope: 'system/Patient.rs', what: 'search Patients', path: '/Patient?_id=p1' },
    { scope: 'system/Patient.rs', what: "read a Patient's history", path: '/Patient/p1/_history' },
    { scope: 'system/Patient.rs', what: 'vread a Patient', path: '/Patient/p1/_history/1' },
    { scope: 'system/*.read', what: 'read a Patient', path: '/Patient/p1' },
    { scope: 'system/*.read', what: 'read an Observation', path: '/Observation/obs1' },
    { scope: 'system/*.read', what: 'search Observations', path: '/Observation?subject=Patient/p1' },
  ])('$scope may $what', async ({ scope, path }) => {
    expect((await as(scope, path)).status).toBe(200);
  });

  it.each([
    { scope: 'system/Patient.rs', what: 'create a Patient', path: '/Patient', method: 'POST', body: newPatient },
    { scope: 'system/Patient.rs', what: 'update a Patient', path: '/Patient/p1', method: 'PUT', body: fixtures[1] },
    { scope: 'system/Patient.rs', what: 'create a Patient by PUT', path: '/Patient/p9', method: 'PUT', body: { resourceType: 'Patient', id: 'p9' } },
    { scope: 'system/Patient.rs', what: 'delete a Patient', path: '/Patient/p1', method: 'DELETE' },
    { scope: 'system/Patient.rs', what: 'read an Observation', path: '/Observation/obs1' },
    { scope: 'system/Patient.rs', what: 'search Observations', path: '/Observation' },
    { scope: 'system/Patient.rs', what: "read an Observation's history", path: '/Observation/obs1/_history' },
    { scope: 'system/Patient.rs', what: 'create an Observation', path: '/Observation', method: 'POST', body: fixtures[2] },
    { scope: 'system/*.read', what: 'create a Patient', path: '/Patient', method: 'POST', body: newPatient },
    { scope: 'system/*.read', what: 'update a Patient', path: '/Patient/p1', method: 'PUT', body: fixtures[1] },
    { scope: 'system/*.read', what: 'delete an Observation', path: '/Observation/obs1', method: 'DELETE' },
    { scope: 'system/*.read', what: 'run a transaction with a create', path: '', method: 'POST', body: transaction(post(newPatient)) },
    { scope: 'system/Patient.c', what: 'read a Patient', path: '/Patient/p1' },
    { scope: 'system/Patient.c', what: 'search Patients', path: '/Patient' },
    {
      scope: 'system/Patient.c',
      what: 'create with If-None-Exist (a search)',
      path: '/Patient',
      method: 'POST',
      body: newPatient,
      headers: { 'If-None-Exist': 'family=New' },
    },
    {
      scope: 'system/Patient.c',
      what: 'create with ifNoneExist in a transaction',
      path: '',
      method: 'POST',
      body: transaction({ ...post(newPatient), request: { method: 'POST', url: 'Patient', ifNoneExist: 'family=New' } }),
    },
    {
      scope: 'system/Patient.cruds',
      what: 'run a transaction with one Observation among Patients',
      path: '',
      method: 'POST',
      body: transaction(post(newPatient), post({ ...fixtures[2], id: undefined } as any), post(newPatient)),
    },
    {
      scope: 'system/Patient.cruds',
      what: 'read an Observation in a transaction that writes a Patient',
      path: '',
      method: 'POST',
      body: transaction(post(newPatient), { request: { method: 'GET', url: 'Observation/obs1' } }),
    },
    {
      scope: 'system/Patient.cruds',
      what: 'search Observations in a transaction that writes a Patient',
      path: '',
      method: 'POST',
      body: transaction(post(newPatient), { request: { method: 'GET', url: 'Observation?status=final' } }),
    },
  ])('$scope may not $what: 403, nothing stored', async ({ scope, path, method, body, headers }) => {
    const before = await storedVersions(server, server.project.projectId);
    const outcome = await expectOutcome(await as(scope, path, { method, body, headers }), 403, 'forbidden');
    expect(outcome.issue[0].diagnostics).toMatch(/scope/);
    expect(await storedVersions(server, server.project.projectId)).toBe(before);
  });

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
        entry: [post({ ...fixtures[2], id: undefined } as any), post(newPatient), { request: { method: 'GET', url: 'Observation/obs1' } }],
      },
    });
    expect(response.status).toBe(200);
    const bundle = await response.json();
    expect(bundle.entry.map((e: any) => e.response.status)).toEqual(['403', '201 Created', '403']);
    expect(bundle.entry[0].response.outcome.issue[0].code).toBe('forbidden');
    expect(JSON.stringify(bundle)).not.toContain('"resourceType":"Observation"');
  });

  it.each([
    { scope: 'system/Patient.rs', query: '_include=Patient:organization', expected: ['match:Patient/p1'] },
    {
      scope: 'system/Patient.rs system/Organization.r',
      query: '_include=Patient:organization',
      expected: ['match:Patient/p1', 'include:Organization/org1'],
    },
    { scope: 'system/Patient.rs', query: '_revinclude=Observation:subject', expected: ['match:Patient/p1'] },
    { scope: 'system/*.read', query: '_revinclude=Observation:subject', expected: ['match:Patient/p1', 'include:Observation/obs1'] },
  ])('$scope searching Patient?$query sees $expected', async ({ scope, query, expected }) => {
    const response = await as(scope, `/Patient?_id=p1&${query}`);
    expect(response.status).toBe(200);
    expect(entriesOf(await response.json())).toEqual(expected);
  });

  // BUG (runtime/fhir/bundle-processor.ts, readEntry(), the search branch near the end of the
  // file): a GET search entry of a batch or transaction returns `_include`/`_revinclude`
  // resources without checking the token's scopes, unlike GET {base}/{type} (fhir-routes.ts
  // searchType(), which filters `included` by `access.scopes.allows(type, 'r')`). A token with
  // only system/Patient.rs reads Organizations and Observations this way. Fix: give
  // BundleContext an `allows(type, interaction)` (or reuse `authorize` in a try) and filter
  // `result.included` the same way before searchBundle().
  it.fails.each(['batch', 'transaction'])('a %s search entry leaves out included resources the token may not read', async (type) => {
    const response = await as('system/Patient.rs', '', {
      method: 'POST',
      body: {
        resourceType: 'Bundle',
        type,
        entry: [{ request: { method: 'GET', url: 'Patient?_id=p1&_include=Patient:organization&_revinclude=Observation:subject' } }],
      },
    });
    expect(response.status).toBe(200);
    const bundle = await response.json();
    expect(entriesOf(bundle.entry[0].resource)).toEqual(['match:Patient/p1']);
  });
});

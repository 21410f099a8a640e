/**
 * The real MedplumClient (@medplum/core), unchanged, against a real Graphir server: it logs in
 * with client credentials and then reads, searches, writes, runs Bundles, GraphQL and bots,
 * configured only with Graphir's addresses (docs/client.md, "Using MedplumClient").
 */
import { readFileSync } from 'node:fs';
import { decodeJwt } from 'jose';
import type { Bundle, Resource } from '@medplum/fhirtypes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import './websocket-stand-in.js';

const { MedplumClient, OperationOutcomeError } = await import('@medplum/core');
type Medplum = InstanceType<typeof MedplumClient>;

const ADT = readFileSync('test/fixtures/hl7/adt-a01.hl7', 'utf8');
const ECHO = `export async function handler(fhir, event) {
  return { contentType: event.contentType, input: event.input };
}`;
const GREET = `exports.handler = async (fhir, event) => 'hello ' + event.input;`;
const ACK = `export async function handler(fhir, event) { return event.input.buildAck(); }`;
const FAIL = `export async function handler() { throw new Error('no such thing'); }`;
const ECHO_ID = { system: 'urn:test:medplum', value: 'echo' };

interface Sent {
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
}

/** Graphir's addresses, as docs/client.md gives them, and a fetch that notes each request. */
function medplumFor(server: TestServer, sent: Sent[] = []): Medplum {
  return new MedplumClient({
    baseUrl: `${server.url}/`,
    fhirUrlPath: 'fhir/R4',
    tokenUrl: 'oauth2/token',
    fetch: (url: string, init: RequestInit) => {
      sent.push({ method: init.method ?? 'GET', url, headers: new Headers(init.headers) });
      return fetch(url, init);
    },
  });
}

const patient = (family: string, extra: object = {}) => ({
  resourceType: 'Patient' as const,
  name: [{ family }],
  ...extra,
});

describe.each(await availableEngines())('MedplumClient: login and CRUD on %s', (engine) => {
  let server: TestServer;
  let medplum: Medplum;
  const sent: Sent[] = [];
  beforeAll(async () => {
    server = await startTestServer(engine);
    medplum = medplumFor(server, sent);
  });
  afterAll(() => server?.stop());

  it('logs in with startClientLogin: the token names the client, and nothing else is asked', async () => {
    const profile = await medplum.startClientLogin(
      server.project.clientId,
      server.project.clientSecret,
    );
    // A Graphir token is not a Medplum login (no login_id), so the client asks for no profile.
    expect(profile).toBeUndefined();
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([`POST ${server.url}/oauth2/token`]);
    expect(medplum.isAuthenticated()).toBe(true);
    expect(decodeJwt(medplum.getAccessToken()!)).toMatchObject({
      client_id: server.project.clientId,
      aud: `${server.url}/fhir/R4`,
    });
  });

  it('refuses a wrong secret with the server’s reason', async () => {
    const other = medplumFor(server);
    await expect(other.startClientLogin(server.project.clientId, 'wrong')).rejects.toThrow(
      /Unknown client or wrong secret/,
    );
    expect(other.getAccessToken()).toBeUndefined();
  });

  it('createResource, readResource, readReference', async () => {
    const created = await medplum.createResource(patient('Medplum-crud', { active: true }));
    expect(created).toMatchObject({ resourceType: 'Patient', meta: { versionId: '1' } });
    expect(created.id).toMatch(/^[A-Za-z0-9.-]{1,64}$/);
    const read = await medplum.readResource('Patient', created.id);
    expect(read).toEqual(created);
    const byReference = await medplum.readReference({ reference: `Patient/${created.id}` });
    expect(byReference).toEqual(created);
    // Every FHIR call carried the token, and MedplumClient's own headers did no harm.
    const fhirCalls = sent.filter((s) => s.url.startsWith(`${server.url}/fhir/R4/`));
    expect(fhirCalls.length).toBe(3);
    for (const call of fhirCalls) {
      expect(call.headers.get('authorization')).toBe(`Bearer ${medplum.getAccessToken()}`);
      expect(call.headers.get('x-medplum')).toBe('extended');
    }
  });

  it('updateResource, readHistory, deleteResource', async () => {
    const created = await medplum.createResource(patient('Medplum-history', { active: true }));
    const updated = await medplum.updateResource({ ...created, active: false });
    expect(updated).toMatchObject({ id: created.id, active: false, meta: { versionId: '2' } });
    const history: Bundle = await medplum.readHistory('Patient', created.id);
    expect(history).toMatchObject({ resourceType: 'Bundle', type: 'history', total: 2 });
    expect(history.entry!.map((e) => e.resource?.meta?.versionId).sort()).toEqual(['1', '2']);
    expect(history.entry!.find((e) => e.resource?.meta?.versionId === '2')!.resource).toEqual(
      updated,
    );

    const deleted = await medplum.deleteResource('Patient', created.id);
    expect(deleted).toMatchObject({ resourceType: 'OperationOutcome' });
    const gone = await medplum.readResource('Patient', created.id).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(gone).toBeInstanceOf(OperationOutcomeError);
    expect((gone as InstanceType<typeof OperationOutcomeError>).outcome.issue[0].code).toBe(
      'deleted',
    );
  });

  it('reading a resource that does not exist throws an OperationOutcomeError (not-found)', async () => {
    const error = await medplum.readResource('Patient', 'no-such-patient').catch((e) => e);
    expect(error).toBeInstanceOf(OperationOutcomeError);
    expect(error.outcome.issue[0].code).toBe('not-found');
  });
});

describe('MedplumClient: search, conditional writes, Bundles, GraphQL, bots', () => {
  let server: TestServer;
  let medplum: Medplum;
  let echoId: string;
  let greetId: string;
  beforeAll(async () => {
    server = await startTestServer('pglite');
    medplum = medplumFor(server);
    await medplum.startClientLogin(server.project.clientId, server.project.clientSecret);
    echoId = (
      await medplum.createResource({
        resourceType: 'Bot',
        name: 'echo',
        code: ECHO,
        identifier: [ECHO_ID],
      } as Resource)
    ).id!;
    greetId = (
      await medplum.createResource({ resourceType: 'Bot', name: 'greet', code: GREET } as Resource)
    ).id!;
  });
  afterAll(() => server?.stop());

  /** `count` patients of one family, created in order. */
  const family = async (name: string, count: number) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push((await medplum.createResource(patient(name, { birthDate: `200${i}-01-01` }))).id);
    return ids;
  };

  it('search answers the searchset Bundle, with total and absolute links', async () => {
    const ids = await family('Medplum-search', 3);
    const bundle: Bundle = await medplum.search('Patient', {
      family: 'Medplum-search',
      _count: '2',
    });
    expect(bundle).toMatchObject({ resourceType: 'Bundle', type: 'searchset', total: 3 });
    expect(bundle.entry).toHaveLength(2);
    for (const entry of bundle.entry!) {
      expect(ids).toContain(entry.resource!.id);
      expect(entry.fullUrl).toBe(`${server.url}/fhir/R4/Patient/${entry.resource!.id}`);
    }
    const next = bundle.link!.find((link) => link.relation === 'next')!.url!;
    expect(next.startsWith(`${server.url}/fhir/R4/Patient?`)).toBe(true);
  });

  it('searchResources answers the resources, with their Bundle', async () => {
    const ids = await family('Medplum-resources', 2);
    const found = await medplum.searchResources('Patient', 'family=Medplum-resources');
    expect(found.map((p) => p.id).sort()).toEqual([...ids].sort());
    expect(found.bundle).toMatchObject({ type: 'searchset', total: 2 });
    expect(await medplum.searchResources('Patient', { family: 'Medplum-nobody' })).toHaveLength(0);
  });

  it('searchOne answers the first match, or undefined', async () => {
    const [id] = await family('Medplum-one', 1);
    expect((await medplum.searchOne('Patient', { family: 'Medplum-one' }))?.id).toBe(id);
    expect(await medplum.searchOne('Patient', { family: 'Medplum-none' })).toBeUndefined();
  });

  it('searchResourcePages follows the next links to the last page', async () => {
    const ids = await family('Medplum-pages', 5);
    const pages: string[][] = [];
    for await (const page of medplum.searchResourcePages('Patient', {
      family: 'Medplum-pages',
      _count: 2,
      _sort: 'birthdate',
    }))
      pages.push(page.map((p) => p.id));
    expect(pages).toEqual([ids.slice(0, 2), ids.slice(2, 4), ids.slice(4)]);
  });

  it('createResourceIfNoneExist creates once, then answers the one that exists', async () => {
    const identifier = [{ system: 'urn:test:mrn', value: 'medplum-1' }];
    const first = await medplum.createResourceIfNoneExist(
      patient('Medplum-ifnone', { identifier }),
      'identifier=urn:test:mrn|medplum-1',
    );
    const second = await medplum.createResourceIfNoneExist(
      patient('Medplum-ifnone-again', { identifier }),
      'identifier=urn:test:mrn|medplum-1',
    );
    expect(second.id).toBe(first.id);
    expect(second.name).toEqual([{ family: 'Medplum-ifnone' }]);
    const all = await medplum.searchResources('Patient', 'identifier=urn:test:mrn|medplum-1');
    expect(all).toHaveLength(1);
  });

  it('upsertResource creates when nothing matches, then updates the one that does', async () => {
    const identifier = [{ system: 'urn:test:mrn', value: 'medplum-upsert' }];
    const created = await medplum.upsertResource(
      patient('Medplum-upsert', { identifier, active: true }),
      { identifier: 'urn:test:mrn|medplum-upsert' },
    );
    expect(created).toMatchObject({ active: true, meta: { versionId: '1' } });
    const updated = await medplum.upsertResource(
      patient('Medplum-upsert', { identifier, active: false }),
      'identifier=urn:test:mrn|medplum-upsert',
    );
    expect(updated).toMatchObject({ id: created.id, active: false, meta: { versionId: '2' } });
    const all = await medplum.searchResources('Patient', 'identifier=urn:test:mrn|medplum-upsert');
    expect(all.map((p) => p.id)).toEqual([created.id]);
  });

  it('upsertResource rejects when several resources match, changing nothing', async () => {
    const identifier = [{ system: 'urn:test:mrn', value: 'medplum-twice' }];
    const twins = [
      await medplum.createResource(patient('Medplum-twin', { identifier })),
      await medplum.createResource(patient('Medplum-twin', { identifier })),
    ];
    const error = await medplum
      .upsertResource(patient('Medplum-twin', { identifier, active: true }), {
        identifier: 'urn:test:mrn|medplum-twice',
      })
      .catch((e) => e);
    expect(error).toBeInstanceOf(OperationOutcomeError);
    expect(error.outcome.issue[0]).toMatchObject({ code: 'duplicate' });
    expect(error.outcome.issue[0].diagnostics).toMatch(/matches more than one Patient/);
    for (const twin of twins) expect(await medplum.readResource('Patient', twin.id)).toEqual(twin);
    expect(await medplum.searchResources('Patient', { family: 'Medplum-twin' })).toHaveLength(2);
  });

  it('patchResource applies JSON Patch operations as a new version', async () => {
    const created = await medplum.createResource(patient('Medplum-patch', { active: true }));
    const patched = await medplum.patchResource('Patient', created.id, [
      { op: 'replace', path: '/active', value: false },
      { op: 'add', path: '/name/0/given', value: ['Eve'] },
    ]);
    expect(patched).toMatchObject({
      id: created.id,
      active: false,
      name: [{ family: 'Medplum-patch', given: ['Eve'] }],
      meta: { versionId: '2' },
    });
    expect(await medplum.readResource('Patient', created.id)).toEqual(patched);
  });

  it.each([
    // 422 `processing`, as RFC 5789 has it for a patch that cannot apply.
    ['a failing test operation', { op: 'test', path: '/active', value: false }, /"processing"/],
    [
      'a patch that makes the resource invalid',
      { op: 'replace', path: '/gender', value: 'x' },
      /gender/,
    ],
  ] as const)('patchResource rejects %s, changing nothing', async (_name, operation, why) => {
    const created = await medplum.createResource(patient('Medplum-patch-bad', { active: true }));
    const error = await medplum.patchResource('Patient', created.id, [operation]).catch((e) => e);
    expect(error).toBeInstanceOf(OperationOutcomeError);
    expect(JSON.stringify(error.outcome.issue)).toMatch(why);
    expect(await medplum.readResource('Patient', created.id)).toEqual(created);
  });

  it('executeBatch runs a batch Bundle, each entry on its own', async () => {
    const [existing] = await family('Medplum-batch', 1);
    const result: Bundle = await medplum.executeBatch({
      resourceType: 'Bundle',
      type: 'batch',
      entry: [
        { request: { method: 'GET', url: `Patient/${existing}` } },
        { request: { method: 'POST', url: 'Patient' }, resource: patient('Medplum-batch') },
        { request: { method: 'GET', url: 'Patient/no-such-patient' } },
      ],
    });
    expect(result).toMatchObject({ resourceType: 'Bundle', type: 'batch-response' });
    expect(result.entry!.map((e) => e.response!.status.slice(0, 3))).toEqual(['200', '201', '404']);
    expect(result.entry![0].resource!.id).toBe(existing);
    expect(await medplum.searchResources('Patient', { family: 'Medplum-batch' })).toHaveLength(2);
  });

  it('executeBatch runs a transaction Bundle, resolving urn:uuid references', async () => {
    const patientUrl = 'urn:uuid:5b0f5ae6-0b8e-4a8f-9d51-6a1c4d1f1e01';
    const result: Bundle = await medplum.executeBatch({
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        {
          fullUrl: patientUrl,
          request: { method: 'POST', url: 'Patient' },
          resource: patient('Medplum-transaction'),
        },
        {
          request: { method: 'POST', url: 'Observation' },
          resource: {
            resourceType: 'Observation',
            status: 'final',
            code: { text: 'weight' },
            subject: { reference: patientUrl },
          },
        },
      ],
    });
    expect(result).toMatchObject({ resourceType: 'Bundle', type: 'transaction-response' });
    const [created, observation] = result.entry!.map((e) => e.resource!);
    expect(observation).toMatchObject({ subject: { reference: `Patient/${created.id}` } });
  });

  it('graphql answers data, by operation name too', async () => {
    const [id] = await family('Medplum-graphql', 1);
    const result = await medplum.graphql(
      `query Other { PatientList(family: "Medplum-nobody") { id } }
       query One { Patient(id: "${id}") { id name { family } } PatientList(family: "Medplum-graphql") { id } }`,
      'One',
    );
    expect(result).toEqual({
      data: {
        Patient: { id, name: [{ family: 'Medplum-graphql' }] },
        PatientList: [{ id }],
      },
    });
  });

  it('executeBot without a content type sends an object as application/fhir+json: the bot gets it', async () => {
    expect(await medplum.executeBot(echoId, { name: 'Eve', n: [1, 2] })).toEqual({
      contentType: 'application/fhir+json',
      input: { name: 'Eve', n: [1, 2] },
    });
    // A resource sent the same way is a resource.
    expect(await medplum.executeBot(ECHO_ID, patient('Medplum-bot'))).toEqual({
      contentType: 'application/fhir+json',
      input: patient('Medplum-bot'),
    });
  });

  it('executeBot with a content type: JSON, text, HL7 v2', async () => {
    expect(await medplum.executeBot(ECHO_ID, { a: 1 }, 'application/json')).toEqual({
      contentType: 'application/json',
      input: { a: 1 },
    });
    expect(await medplum.executeBot(greetId, 'Eve', 'text/plain')).toBe('hello Eve');
    const ack = await medplum.createResource({
      resourceType: 'Bot',
      name: 'ack',
      code: ACK,
    } as Resource);
    const answer = await medplum.executeBot(ack.id!, ADT, 'x-application/hl7-v2+er7');
    expect(answer).toMatch(/^MSH\|.*\rMSA\|AA\|/s);
  });

  it('executeBot of a bot that throws rejects with its OperationOutcome', async () => {
    const failing = await medplum.createResource({
      resourceType: 'Bot',
      name: 'fail',
      code: FAIL,
    } as Resource);
    const error = await medplum.executeBot(failing.id!, { x: 1 }).catch((e) => e);
    expect(error).toBeInstanceOf(OperationOutcomeError);
    expect(error.outcome.issue[0]).toMatchObject({ code: 'processing' });
    expect(error.outcome.issue[0].diagnostics).toMatch(/no such thing/);
  });
});

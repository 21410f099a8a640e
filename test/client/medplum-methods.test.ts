/**
 * GraphirClient's MedplumClient methods, against a real server, each beside the real
 * MedplumClient (@medplum/core) making the same call: same answers, same errors. These are the
 * TS client's alone; those a bot's `fhir` client has too run in client.test.ts's shared suite.
 * MedplumClient gets the project's token with `setAccessToken` (its log-in is tested elsewhere).
 */
import './websocket-stand-in.js';
import { MedplumClient } from '@medplum/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle, Observation, Patient } from '../../generated/types/index.js';
import type { Bundle as MedplumBundle, Patient as MedplumPatient } from '@medplum/fhirtypes';
import { GraphirClient, GraphirError } from '../../runtime/client/index.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const ECHO = `export async function handler(fhir, event) {
  return { contentType: event.contentType, input: event.input };
}`;

/** The error a promise fails with; a promise that succeeds fails the test. */
/**
 * Graphir's generated types and @medplum/fhirtypes describe the same JSON, but TypeScript sees two
 * families of types: the same value, typed as Medplum's client wants it.
 */
function asMedplum(value: Bundle): MedplumBundle;
function asMedplum(value: Patient): MedplumPatient;
function asMedplum(value: Bundle | Patient): MedplumBundle | MedplumPatient {
  return value as MedplumBundle | MedplumPatient;
}

async function failureOf(promise: Promise<unknown>): Promise<any> {
  return promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

/** Medplum throws some argument errors synchronously; as a rejection, for failureOf. */
function later<T>(call: () => Promise<T>): Promise<T> {
  return (async () => call())();
}

const ids = (resources: readonly { id?: string }[]) => resources.map((r) => r.id);

describe('GraphirClient: the methods of MedplumClient', () => {
  let server: TestServer;
  let graphir: GraphirClient;
  let medplum: MedplumClient;
  let serial = 0;
  /** A family name no other test's starts with (searches match prefixes). */
  const family = () => `m${(serial++).toString(36)}x${Math.random().toString(36).slice(2, 8)}`;
  const patient = (name: string, extra: Partial<Patient> = {}): Patient => ({
    resourceType: 'Patient',
    name: [{ family: name }],
    ...extra,
  });

  beforeAll(async () => {
    server = await startTestServer('pglite');
    graphir = new GraphirClient({
      baseUrl: server.url,
      clientId: server.project.clientId,
      clientSecret: server.project.clientSecret,
    });
    medplum = new MedplumClient({ baseUrl: server.url, fhirUrlPath: 'fhir/R4', cacheTime: 0 });
    medplum.setAccessToken(server.project.token);
  });
  afterAll(() => server?.stop());

  describe('reads', () => {
    it('readResource answers the resource; an empty id is refused before any request', async () => {
      const created = await graphir.createResource(patient(family()));
      const read: Patient = await graphir.readResource('Patient', created.id);
      expect(read).toEqual(created);
      expect(await medplum.readResource('Patient', created.id)).toEqual(read);

      const ours = await failureOf(graphir.readResource('Patient', ''));
      const theirs = await failureOf(later(() => medplum.readResource('Patient', '')));
      expect(ours).toBeInstanceOf(Error);
      expect(ours.message).toBe(theirs.message);
    });

    it('readReference reads a Type/id reference, and refuses one without it as Medplum does', async () => {
      const created = await graphir.createResource(patient(family()));
      const reference = { reference: `Patient/${created.id}`, display: 'someone' };
      const read = await graphir.readReference<Patient>(reference);
      expect(read).toEqual(created);
      expect(await medplum.readReference(reference)).toEqual(read);

      for (const bad of [
        { display: 'only a display' },
        { reference: 'Patient' },
        { reference: '' },
      ]) {
        const ours = await failureOf(graphir.readReference(bad));
        const theirs = await failureOf(medplum.readReference(bad));
        expect(ours).not.toBeInstanceOf(GraphirError);
        expect(ours.message).toBe(theirs.message);
      }
      expect((await failureOf(graphir.readReference({ display: 'x' }))).message).toBe(
        'Missing reference',
      );

      const missing = { reference: 'Patient/no-such-patient' };
      const ours = await failureOf(graphir.readReference(missing));
      const theirs = await failureOf(medplum.readReference(missing));
      expect(ours).toBeInstanceOf(GraphirError);
      expect(ours.status).toBe(404);
      expect(ours.outcome).toEqual(theirs.outcome);
      expect(ours.message).toBe(theirs.message);
    });

    it('readHistory answers the history Bundle, newest version first; count and offset as Medplum sends them', async () => {
      const created = await graphir.createResource(patient(family(), { active: true }));
      await graphir.updateResource({ ...created, active: false });
      const history = await graphir.readHistory('Patient', created.id);
      expect(history.resourceType).toBe('Bundle');
      expect(history.type).toBe('history');
      expect(history.entry?.map((e) => e.resource?.meta?.versionId)).toEqual(['2', '1']);
      expect(history.entry?.map((e) => (e.resource as Patient).active)).toEqual([false, true]);
      expect(await medplum.readHistory('Patient', created.id)).toEqual(history);

      const urls: string[] = [];
      const recording = (input: string | URL | Request, init?: RequestInit) => {
        urls.push(String(input));
        return fetch(input, init);
      };
      const page = { count: 5, offset: 1 };
      await new GraphirClient({
        baseUrl: server.url,
        accessToken: server.project.token,
        fetch: recording,
      }).readHistory('Patient', created.id, page);
      const recorded = new MedplumClient({
        baseUrl: server.url,
        fhirUrlPath: 'fhir/R4',
        cacheTime: 0,
        fetch: recording,
      });
      recorded.setAccessToken(server.project.token);
      await recorded.readHistory('Patient', created.id, page);
      expect(urls[0]).toBe(
        `${server.url}/fhir/R4/Patient/${created.id}/_history?_count=5&_offset=1`,
      );
      expect(urls[1]).toBe(urls[0]);

      const ours = await failureOf(graphir.readHistory('Patient', 'no-such-patient'));
      const theirs = await failureOf(medplum.readHistory('Patient', 'no-such-patient'));
      expect(ours.status).toBe(404);
      expect(ours.outcome).toEqual(theirs.outcome);
    });
  });

  describe('search', () => {
    let name: string;
    let male: Patient;
    let female: Patient;

    beforeAll(async () => {
      name = family();
      male = await graphir.createResource(patient(name, { gender: 'male' }));
      female = await graphir.createResource(patient(`${name}f`, { gender: 'female' }));
    });

    it('search answers the searchset Bundle, as MedplumClient gets it', async () => {
      const bundle = await graphir.search('Patient', { family: name, _sort: '_id' });
      expect(bundle.type).toBe('searchset');
      expect(bundle.total).toBe(2);
      expect(ids(bundle.entry!.map((e) => e.resource!))).toEqual(ids([male, female]).sort());
      expect(await medplum.search('Patient', { family: name, _sort: '_id' })).toEqual(bundle);
    });

    it.each([
      ['a string', () => `family=${name}&gender=male`],
      ['a string with a leading ?', () => `?family=${name}&gender=male`],
      ['URLSearchParams', () => new URLSearchParams({ family: name, gender: 'male' })],
      ['a record', () => ({ family: name, gender: 'male', _count: 10, active: undefined })],
      [
        '[name, value] pairs',
        () => [
          ['family', name],
          ['gender', 'male'],
        ],
      ],
    ])('takes the query as %s, as MedplumClient does', async (_form, query) => {
      const found = await graphir.searchResources('Patient', query());
      expect(ids(found)).toEqual([male.id]);
      expect(ids(await medplum.searchResources('Patient', query()))).toEqual([male.id]);
    });

    it('sends a record value that is an array as the parameter repeated (values ANDed)', async () => {
      expect(ids(await graphir.searchResources('Patient', { family: [name, `${name}f`] }))).toEqual(
        [female.id],
      );
    });

    it('refuses a [name, value] pair that is not one, before any request', async () => {
      const error = await failureOf(graphir.searchResources('Patient', [['family']]));
      expect(error).toBeInstanceOf(TypeError);
    });

    it('searchResources answers every entry, matches then included ones, with the Bundle', async () => {
      const observation = await graphir.createResource<Observation>({
        resourceType: 'Observation',
        status: 'final',
        code: { text: name },
        subject: { reference: `Patient/${male.id}` },
      });
      const query = { subject: `Patient/${male.id}`, _include: 'Observation:subject' };
      const found = await graphir.searchResources('Observation', query);
      expect(found.map((r) => `${r.resourceType}/${r.id}`)).toEqual([
        `Observation/${observation.id}`,
        `Patient/${male.id}`,
      ]);
      expect(found.bundle.entry?.map((e) => e.search?.mode)).toEqual(['match', 'include']);
      expect(found.bundle.total).toBe(1);
      const theirs = await medplum.searchResources('Observation', query);
      expect([...found]).toEqual([...theirs]);
      expect(found.bundle).toEqual(theirs.bundle);
    });

    it('searchOne answers the first match, or undefined when nothing matches', async () => {
      expect((await graphir.searchOne('Patient', { family: name, gender: 'female' }))?.id).toBe(
        female.id,
      );
      expect(await graphir.searchOne('Patient', { family: `${name}-nobody` })).toBeUndefined();
      expect(await medplum.searchOne('Patient', { family: `${name}-nobody` })).toBeUndefined();
    });

    it('fails with the OperationOutcome of a search the server refuses', async () => {
      const ours = await failureOf(graphir.search('Patient', { birthdate: 'not-a-date' }));
      const theirs = await failureOf(medplum.search('Patient', { birthdate: 'not-a-date' }));
      expect(ours).toBeInstanceOf(GraphirError);
      expect(ours.status).toBe(400);
      expect(ours.outcome).toEqual(theirs.outcome);
      expect(ours.message).toBe(theirs.message);
    });
  });

  describe('searchResourcePages', () => {
    let name: string;
    let created: Patient[];

    beforeAll(async () => {
      name = family();
      created = [];
      for (let i = 0; i < 5; i++)
        created.push(await graphir.createResource(patient(`${name}${i}`)));
    });

    async function pages<T>(generator: AsyncIterable<T>): Promise<T[]> {
      const all: T[] = [];
      for await (const page of generator) all.push(page);
      return all;
    }

    it('follows the next links, page by page, each page with its Bundle', async () => {
      const query = { family: name, _count: 2, _sort: 'family' };
      const ours = await pages(graphir.searchResourcePages('Patient', query));
      expect(ours.map(ids)).toEqual([
        ids(created.slice(0, 2)),
        ids(created.slice(2, 4)),
        ids(created.slice(4)),
      ]);
      expect(ours.map((page) => page.bundle.type)).toEqual(['searchset', 'searchset', 'searchset']);
      const theirs = await pages(medplum.searchResourcePages('Patient', query));
      expect(theirs.map(ids)).toEqual(ours.map(ids));
    });

    it('asks for pages of 1000 when the query sets no _count', async () => {
      const ours = await pages(
        graphir.searchResourcePages('Patient', `family=${name}&_sort=family`),
      );
      expect(ours).toHaveLength(1);
      expect(ids(ours[0])).toEqual(ids(created));
      expect(ours[0].bundle.link?.find((l) => l.relation === 'self')?.url).toContain('_count=1000');
    });

    it('yields no page when nothing matches', async () => {
      expect(
        await pages(graphir.searchResourcePages('Patient', { family: `${name}-nobody` })),
      ).toEqual([]);
      expect(
        await pages(medplum.searchResourcePages('Patient', { family: `${name}-nobody` })),
      ).toEqual([]);
    });
  });

  describe('writes', () => {
    const countOf = async (query: Record<string, string>) =>
      (await graphir.search('Patient', { ...query, _summary: 'count' })).total;

    it('createResource refuses a resource without a resourceType, before any request', async () => {
      const bad = { name: [{ family: 'x' }] } as unknown as Patient;
      const ours = await failureOf(graphir.createResource(bad));
      const theirs = await failureOf(medplum.createResource(asMedplum(bad)));
      expect(ours).toBeInstanceOf(TypeError);
      expect(ours.message).toBe(theirs.message);
    });

    it('createResource fails with the OperationOutcome of an invalid resource, storing nothing', async () => {
      const name = family();
      const invalid = patient(name, { birthDate: 'not a date' });
      const ours = await failureOf(graphir.createResource(invalid));
      const theirs = await failureOf(medplum.createResource(asMedplum(invalid)));
      expect(ours).toBeInstanceOf(GraphirError);
      expect(ours.status).toBe(400);
      expect(ours.outcome.issue[0].expression).toBeDefined();
      expect(ours.message).toBe(theirs.message);
      expect(ours.outcome).toEqual(theirs.outcome);
      expect(await countOf({ family: name })).toBe(0);
    });

    it('passes request options to fetch: headers such as Prefer, and an abort signal', async () => {
      const name = family();
      const outcome = await graphir.createResource(patient(name), {
        headers: { Prefer: 'return=OperationOutcome' },
      });
      expect(outcome.resourceType).toBe('OperationOutcome');
      expect(await countOf({ family: name })).toBe(1);

      const aborted = await failureOf(
        graphir.readResource('Patient', 'x', { signal: AbortSignal.abort() }),
      );
      expect(aborted.name).toBe('AbortError');
    });

    it('createResourceIfNoneExist creates once, then answers the match; several matches are refused', async () => {
      const name = family();
      const identifier = { system: 'urn:test:client', value: name };
      const query = `identifier=${identifier.system}|${identifier.value}`;
      const created = await graphir.createResourceIfNoneExist(
        patient(name, { identifier: [identifier] }),
        query,
      );
      expect(created.meta?.versionId).toBe('1');
      const again = await graphir.createResourceIfNoneExist(
        patient(name, { identifier: [identifier], active: true }),
        query,
      );
      expect(again).toEqual(created);
      const byMedplum = await medplum.createResourceIfNoneExist(
        asMedplum(patient(name, { identifier: [identifier] })),
        query,
      );
      expect(byMedplum).toEqual(created);
      expect(await countOf({ family: name })).toBe(1);

      await graphir.createResource(patient(name));
      const ours = await failureOf(
        graphir.createResourceIfNoneExist(patient(name), `family=${name}`),
      );
      const theirs = await failureOf(
        medplum.createResourceIfNoneExist(asMedplum(patient(name)), `family=${name}`),
      );
      expect(ours).toBeInstanceOf(GraphirError);
      expect(ours.status).toBe(412);
      expect(ours.outcome).toEqual(theirs.outcome);
      expect(await countOf({ family: name })).toBe(2);

      expect(await failureOf(graphir.createResourceIfNoneExist(patient(name), ''))).toBeInstanceOf(
        TypeError,
      );
    });

    it('updateResource answers the new version; one without an id is refused as Medplum does', async () => {
      const created = await graphir.createResource(patient(family(), { active: true }));
      const updated = await graphir.updateResource({ ...created, active: false });
      expect(updated).toMatchObject({ id: created.id, active: false, meta: { versionId: '2' } });
      const byMedplum = await medplum.updateResource(asMedplum({ ...updated, gender: 'other' }));
      expect(byMedplum.meta?.versionId).toBe('3');
      expect(await graphir.readResource('Patient', created.id)).toEqual(byMedplum);

      const withoutId = patient(family());
      const ours = await failureOf(graphir.updateResource(withoutId));
      const theirs = await failureOf(medplum.updateResource(asMedplum(withoutId)));
      expect(ours.message).toBe(theirs.message);
    });

    it('upsertResource creates when nothing matches and updates the one match (PUT Type?query)', async () => {
      const name = family();
      const identifier = { system: 'urn:test:upsert', value: name };
      const query = { identifier: `${identifier.system}|${identifier.value}` };
      const created = await graphir.upsertResource(
        patient(name, { identifier: [identifier], active: true }),
        query,
      );
      expect(created.meta?.versionId).toBe('1');
      const updated = await graphir.upsertResource(
        patient(name, { identifier: [identifier], active: false }),
        `identifier=${encodeURIComponent(query.identifier)}`,
      );
      expect(updated).toMatchObject({ id: created.id, active: false, meta: { versionId: '2' } });
      const byMedplum = await medplum.upsertResource(
        asMedplum(patient(name, { identifier: [identifier], gender: 'female' })),
        query,
      );
      expect(byMedplum).toMatchObject({
        id: created.id,
        gender: 'female',
        meta: { versionId: '3' },
      });
      expect(await countOf({ family: name })).toBe(1);
    });

    it('upsertResource refuses several matches (412) and a missing query, storing nothing', async () => {
      const name = family();
      const [first] = [
        await graphir.createResource(patient(name)),
        await graphir.createResource(patient(name)),
      ];
      const ours = await failureOf(
        graphir.upsertResource(patient(name, { active: true }), { family: name }),
      );
      const theirs = await failureOf(
        medplum.upsertResource(asMedplum(patient(name, { active: true })), { family: name }),
      );
      expect(ours).toBeInstanceOf(GraphirError);
      expect(ours.status).toBe(412);
      expect(ours.outcome).toEqual(theirs.outcome);
      expect(await countOf({ family: name })).toBe(2);
      expect((await graphir.readResource('Patient', first.id!)).meta?.versionId).toBe('1');

      expect(await failureOf(graphir.upsertResource(patient(name), {}))).toBeInstanceOf(TypeError);
    });

    it('patchResource applies JSON Patch operations and answers the new version', async () => {
      const created = await graphir.createResource(patient(family(), { active: true }));
      const patched = await graphir.patchResource('Patient', created.id, [
        { op: 'replace', path: '/active', value: false },
        { op: 'add', path: '/gender', value: 'female' },
      ]);
      expect(patched).toMatchObject({
        id: created.id,
        active: false,
        gender: 'female',
        meta: { versionId: '2' },
      });
      const byMedplum = await medplum.patchResource('Patient', created.id, [
        { op: 'test', path: '/gender', value: 'female' },
        { op: 'remove', path: '/active' },
      ]);
      expect(byMedplum.meta?.versionId).toBe('3');
      expect(byMedplum.active).toBeUndefined();
      expect(await graphir.readResource('Patient', created.id)).toEqual(byMedplum);
    });

    it('patchResource fails as the server refuses the patch, storing nothing', async () => {
      const created = await graphir.createResource(patient(family(), { gender: 'male' }));
      const refusals: [string, Parameters<GraphirClient['patchResource']>[2], number][] = [
        ['a failing test', [{ op: 'test', path: '/gender', value: 'female' }], 422],
        ['an invalid result', [{ op: 'add', path: '/birthDate', value: 'not a date' }], 400],
        ['a path that is no pointer', [{ op: 'remove', path: 'gender' }], 400],
      ];
      for (const [what, operations, status] of refusals) {
        const ours = await failureOf(graphir.patchResource('Patient', created.id, operations));
        const theirs = await failureOf(medplum.patchResource('Patient', created.id, operations));
        expect(ours, what).toBeInstanceOf(GraphirError);
        expect(ours.status, what).toBe(status);
        expect(ours.outcome, what).toEqual(theirs.outcome);
      }
      expect(await graphir.readResource('Patient', created.id)).toEqual(created);

      const missing = await failureOf(
        graphir.patchResource('Patient', 'no-such-patient', [{ op: 'remove', path: '/gender' }]),
      );
      expect(missing.status).toBe(404);
      const notAnArray = await failureOf(
        graphir.patchResource('Patient', created.id, {} as unknown as []),
      );
      expect(notAnArray).toBeInstanceOf(TypeError);
    });

    it('deleteResource answers the OperationOutcome; the resource is then gone', async () => {
      const name = family();
      const [mine, theirs] = [
        await graphir.createResource(patient(name)),
        await graphir.createResource(patient(name)),
      ];
      const deleted = (id: string) => ({
        resourceType: 'OperationOutcome',
        issue: [
          { severity: 'information', code: 'informational', diagnostics: `Deleted Patient/${id}` },
        ],
      });
      expect(await graphir.deleteResource('Patient', mine.id)).toEqual(deleted(mine.id));
      expect(await medplum.deleteResource('Patient', theirs.id)).toEqual(deleted(theirs.id));
      expect(await countOf({ family: name })).toBe(0);
      const gone = await failureOf(graphir.readResource('Patient', mine.id));
      expect(gone).toBeInstanceOf(GraphirError);
      expect(gone.status).toBe(410);
    });

    it('executeBatch posts a batch Bundle to the base and answers each entry', async () => {
      const name = family();
      const batch: Bundle = {
        resourceType: 'Bundle',
        type: 'batch',
        entry: [
          { resource: patient(name), request: { method: 'POST', url: 'Patient' } },
          { request: { method: 'GET', url: 'Patient/no-such-patient' } },
        ],
      };
      const ours = await graphir.executeBatch(batch);
      expect(ours.type).toBe('batch-response');
      expect(ours.entry?.map((e) => e.response?.status.slice(0, 3))).toEqual(['201', '404']);
      const byMedplum = await medplum.executeBatch(asMedplum(batch));
      expect(byMedplum.entry?.map((e) => e.response?.status)).toEqual(
        ours.entry?.map((e) => e.response?.status),
      );
      expect(await countOf({ family: name })).toBe(2);
    });
  });

  describe('graphql', () => {
    const TWO_OPERATIONS = `query First { PatientList(_count: 1) { id } }
      query Second($family: String) { PatientList(family: $family) { id } }`;
    let created: Patient;

    beforeAll(async () => {
      created = await graphir.createResource(patient(family()));
    });

    it("takes Medplum's order: (query, operationName, variables)", async () => {
      const query = 'query GetPatient($id: ID!) { Patient(id: $id) { id name { family } } }';
      const ours = await graphir.graphql(query, 'GetPatient', { id: created.id });
      expect(ours.errors).toBeUndefined();
      expect(ours.data.Patient).toEqual({ id: created.id, name: created.name });
      expect(await medplum.graphql(query, 'GetPatient', { id: created.id })).toEqual(ours);
      expect(await graphir.graphql(query, null, { id: created.id })).toEqual(ours);
    });

    it("takes Graphir's order too: (query, variables, operationName)", async () => {
      const family = created.name![0].family!;
      const ours = await graphir.graphql(TWO_OPERATIONS, { family }, 'Second');
      expect(ours).toEqual({ data: { PatientList: [{ id: created.id }] } });
      expect(await graphir.graphql(TWO_OPERATIONS, 'Second', { family })).toEqual(ours);
      expect(await medplum.graphql(TWO_OPERATIONS, 'Second', { family })).toEqual(ours);
    });

    it('refuses variables that are not an object, before any request', async () => {
      const misordered = await failureOf(
        graphir.graphql(TWO_OPERATIONS, undefined, 'Second' as unknown as Record<string, unknown>),
      );
      expect(misordered).toBeInstanceOf(TypeError);
      expect(misordered.message).toContain('graphql(query, operationName, variables)');
      const notAName = await failureOf(
        graphir.graphql(TWO_OPERATIONS, { family: 'x' }, 7 as unknown as string),
      );
      expect(notAName).toBeInstanceOf(TypeError);
    });
  });

  describe('executeBot', () => {
    let botId: string;

    beforeAll(async () => {
      botId = (await graphir.createResource({ resourceType: 'Bot', name: 'echo', code: ECHO })).id;
    });

    it("takes Medplum's arguments (idOrIdentifier, data, contentType, options)", async () => {
      const ours = await graphir.executeBot(botId, { a: 1 }, 'application/json');
      expect(ours).toEqual({ contentType: 'application/json', input: { a: 1 } });
      expect(await medplum.executeBot(botId, { a: 1 }, 'application/json')).toEqual(ours);
      expect(await graphir.executeBot(botId, 'plain', 'text/plain')).toEqual(
        await medplum.executeBot(botId, 'plain', 'text/plain'),
      );
    });

    it('refuses an identifier without a system or a value, before any request', async () => {
      const error = await failureOf(graphir.executeBot({ value: 'echo' }, {}));
      expect(error).toBeInstanceOf(TypeError);
    });
  });

  describe('GraphirError', () => {
    it("reads a refused GraphQL request's message, from an OperationOutcome or an {errors} body", async () => {
      const refused = new GraphirClient({ baseUrl: server.url, accessToken: 'not-a-token' });
      const error = await failureOf(refused.graphql('{ PatientList { id } }'));
      expect(error).toBeInstanceOf(GraphirError);
      expect(error.status).toBe(401);
      expect(error.message).not.toMatch(/^HTTP 401/);
      expect(error.outcome.resourceType).toBe('OperationOutcome');
      expect(error.outcome.issue[0].severity).toBe('error');
    });

    it('always carries an OperationOutcome, also when the server answered none', async () => {
      const bad = new GraphirClient({ baseUrl: server.url, clientId: 'x', clientSecret: 'y' });
      const error = await failureOf(bad.readResource('Patient', 'x'));
      expect(error).toBeInstanceOf(GraphirError);
      expect(error.status).toBe(401);
      expect(error.outcome).toEqual({
        resourceType: 'OperationOutcome',
        issue: [{ severity: 'error', code: 'processing', diagnostics: error.message }],
      });
    });
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Bundle, Observation, Patient } from '../../generated/types/index.js';
import { GraphirClient, GraphirError, Hl7Message } from '../../runtime/client/index.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { SHARED_CHECKS_BOT, sharedChecks } from './shared-checks.js';

const ADT = readFileSync('test/fixtures/hl7/adt-a01.hl7', 'utf8');
const ECHO = `export async function handler(fhir, event) {
  const input = event.input;
  const seen = input instanceof Hl7Message ? 'hl7' : input === null ? 'null' : typeof input;
  const echoed = { seen, contentType: event.contentType, input: seen === 'hl7' ? input.toString() : input };
  return echoed;
}`;
const ACK = `export async function handler(fhir, event) { return event.input.buildAck(); }`;
const TEXT = `exports.handler = async (fhir, event) => 'hello ' + event.input;`;
const ECHO_ID = { system: 'urn:test:client', value: 'echo' };

/** A fetch that counts token requests and can spoil the next bearer token it sends. */
function countingFetch() {
  const state = { tokens: 0, spoilNext: false };
  const wrapped: typeof fetch = (input, init) => {
    if (String(input).endsWith('/oauth2/token')) state.tokens++;
    if (state.spoilNext && init?.headers) {
      state.spoilNext = false;
      const headers = new Headers(init.headers);
      headers.set('Authorization', 'Bearer spoiled');
      return fetch(input, { ...init, headers });
    }
    return fetch(input, init);
  };
  return { state, fetch: wrapped };
}

describe('GraphirClient', () => {
  let server: TestServer;
  let client: GraphirClient;
  let echoId: string;

  beforeAll(async () => {
    server = await startTestServer('pglite', { GRAPHIR_TOKEN_LIFETIME_SECONDS: '2' });
    client = new GraphirClient({
      baseUrl: server.url,
      clientId: server.project.clientId,
      clientSecret: server.project.clientSecret,
    });
    echoId = (
      await client.createResource({
        resourceType: 'Bot',
        name: 'echo',
        code: ECHO,
        identifier: [ECHO_ID],
      })
    ).id!;
  });
  afterAll(() => server?.stop());

  describe('tokens', () => {
    it('gets a token from client credentials and renews it shortly before it expires', async () => {
      const counter = countingFetch();
      const own = new GraphirClient({
        baseUrl: `${server.url}/`,
        clientId: server.project.clientId,
        clientSecret: server.project.clientSecret,
        fetch: counter.fetch,
      });
      const first = await own.getAccessToken();
      await own.searchResources('Patient');
      expect(counter.state.tokens).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(await own.searchResources('Patient')).toBeInstanceOf(Array);
      expect(counter.state.tokens).toBe(2);
      expect(await own.getAccessToken()).not.toBe(first);
    });

    it('renews once on a 401', async () => {
      const counter = countingFetch();
      const own = new GraphirClient({
        baseUrl: server.url,
        clientId: server.project.clientId,
        clientSecret: server.project.clientSecret,
        fetch: counter.fetch,
      });
      await own.getAccessToken();
      counter.state.spoilNext = true;
      expect(await own.searchResources('Patient')).toBeInstanceOf(Array);
      expect(counter.state.tokens).toBe(2);
    });

    it('works with a given access token, and throws 401 when it is refused', async () => {
      const token = await server.token(server.project.clientId, server.project.clientSecret);
      const own = new GraphirClient({ baseUrl: server.url, accessToken: token });
      const created = await own.createResource<Patient>({ resourceType: 'Patient' });
      expect(created.id).toBeTruthy();
      const bad = new GraphirClient({ baseUrl: server.url, accessToken: 'nonsense' });
      const error = await bad.readResource('Patient', created.id!).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GraphirError);
      expect((error as GraphirError).status).toBe(401);
      expect((error as GraphirError).outcome?.resourceType).toBe('OperationOutcome');
    });

    it('reports wrong credentials', async () => {
      const bad = new GraphirClient({ baseUrl: server.url, clientId: 'x', clientSecret: 'y' });
      const error = await bad.searchResources('Patient').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GraphirError);
      expect((error as GraphirError).status).toBe(401);
    });
  });

  describe('FHIR REST', () => {
    it('creates, reads, updates, searches and deletes, typed by resource type', async () => {
      const created = await client.createResource<Patient>({
        resourceType: 'Patient',
        name: [{ family: 'Typed', given: ['Ada'] }],
      });
      const read: Patient = await client.readResource('Patient', created.id!);
      expect(read.name?.[0].family).toBe('Typed');
      const updated = await client.updateResource({ ...read, gender: 'female' });
      expect(updated.gender).toBe('female');
      expect(updated.meta?.versionId).not.toBe(read.meta?.versionId);
      const found: Patient[] = await client.searchResources('Patient', {
        family: 'Typed',
        gender: ['female'],
      });
      expect(found.map((p) => p.id)).toEqual([created.id]);
      const one = await client.searchOne('Patient', `family=Typed`);
      expect(one?.id).toBe(created.id);
      expect(await client.searchOne('Patient', { family: 'NobodyAtAll' })).toBeUndefined();
      await client.deleteResource('Patient', created.id!);
      expect(await client.searchResources('Patient', { family: 'Typed' })).toHaveLength(0);
    });

    it('maps failures to GraphirError with status and outcome', async () => {
      const error = await client.readResource('Patient', 'does-not-exist').catch((e) => e);
      expect(error).toBeInstanceOf(GraphirError);
      expect(error.status).toBe(404);
      expect(error.outcome.resourceType).toBe('OperationOutcome');
      expect(error.message).toBeTruthy();
    });

    it('runs a transaction with executeBatch', async () => {
      const bundle: Bundle = {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            fullUrl: 'urn:uuid:3b6b2c4e-0d41-4f4e-9d4a-1d1d7d2b5a11',
            resource: { resourceType: 'Patient', name: [{ family: 'Batch' }] },
            request: { method: 'POST', url: 'Patient' },
          },
          {
            resource: {
              resourceType: 'Observation',
              status: 'final',
              code: { text: 'weight' },
              subject: { reference: 'urn:uuid:3b6b2c4e-0d41-4f4e-9d4a-1d1d7d2b5a11' },
            },
            request: { method: 'POST', url: 'Observation' },
          },
        ],
      };
      const response = await client.executeBatch(bundle);
      expect(response.type).toBe('transaction-response');
      expect(response.entry).toHaveLength(2);
      const patientId = response.entry![0].response!.location!.split('/')[1];
      const observations: Observation[] = await client.searchResources('Observation', {
        subject: `Patient/${patientId}`,
      });
      expect(observations).toHaveLength(1);
      expect(observations[0].subject?.reference).toBe(`Patient/${patientId}`);
    });
  });

  describe('GraphQL', () => {
    it('returns data', async () => {
      const created = await client.createResource<Patient>({
        resourceType: 'Patient',
        name: [{ family: 'Graphy' }],
      });
      const result = await client.graphql<{ Patient: { id: string; name: { family: string }[] } }>(
        'query One($id: ID!) { Patient(id: $id) { id name { family } } }',
        { id: created.id },
        'One',
      );
      expect(result.errors).toBeUndefined();
      expect(result.data?.Patient).toEqual({ id: created.id, name: [{ family: 'Graphy' }] });
    });

    it('returns errors instead of throwing', async () => {
      const invalid = await client.graphql('{ NoSuchField }');
      expect(invalid.data).toBeUndefined();
      expect(invalid.errors?.[0].message).toBeTruthy();
      const unparsable = await client.graphql('{ Patient(');
      expect(unparsable.errors?.length).toBeGreaterThan(0);
    });
  });

  describe('executeBot', () => {
    it.each([
      ['a string as text/plain', 'hello', 'string', 'text/plain', 'hello'],
      ['JSON', { a: 1, b: [true] }, 'object', 'application/json', { a: 1, b: [true] }],
      [
        'URLSearchParams as a form',
        new URLSearchParams({ a: '1', b: 'two' }),
        'object',
        'application/x-www-form-urlencoded',
        { a: '1', b: 'two' },
      ],
      [
        'a FHIR resource',
        { resourceType: 'Patient', active: true },
        'object',
        'application/fhir+json',
        { resourceType: 'Patient', active: true },
      ],
      ['an Hl7Message', Hl7Message.parse(ADT), 'hl7', 'x-application/hl7-v2+er7', undefined],
    ])('by id and by identifier: %s', async (_name, input, seen, contentType, echoed) => {
      for (const bot of [echoId, ECHO_ID]) {
        const answer = await client.executeBot(bot, input);
        const result = typeof answer === 'string' ? JSON.parse(answer) : answer;
        expect(result.seen).toBe(seen);
        expect(result.contentType.toLowerCase()).toContain(contentType);
        if (echoed !== undefined) expect(result.input).toEqual(echoed);
        else
          expect(Hl7Message.parse(result.input).toString()).toBe(Hl7Message.parse(ADT).toString());
      }
    });

    it('gets an Hl7Message back from an HL7 bot', async () => {
      const bot = await client.createResource({ resourceType: 'Bot', name: 'ack', code: ACK });
      const ack = await client.executeBot(bot.id!, Hl7Message.parse(ADT));
      expect(ack).toBeInstanceOf(Hl7Message);
      expect(ack.getSegment('MSA')?.getField(1)?.toString()).toBe('AA');
      expect(ack.header.name).toBe('MSH');
    });

    it('gets a string back from a text bot', async () => {
      const bot = await client.createResource({ resourceType: 'Bot', name: 'text', code: TEXT });
      expect(await client.executeBot(bot.id!, 'world')).toBe('hello world');
    });

    it('sends GET inputs as query parameters', async () => {
      const byObject = await client.executeBot(ECHO_ID, { a: '1', b: 'x y' }, { method: 'GET' });
      expect(byObject.input).toEqual({ a: '1', b: 'x y' });
      const byParams = await client.executeBot(echoId, new URLSearchParams({ q: 'z' }), {
        method: 'GET',
      });
      expect(byParams.input).toEqual({ q: 'z' });
    });

    it('lets an explicit content type override the inferred one', async () => {
      const asText = await client.executeBot(echoId, '{"a":1}', 'application/json');
      expect(asText).toMatchObject({ seen: 'object', input: { a: 1 } });
      const asForm = await client.executeBot(echoId, 'a=1&b=2', {
        contentType: 'application/x-www-form-urlencoded',
      });
      expect(asForm).toMatchObject({ seen: 'object', input: { a: '1', b: '2' } });
    });

    it('throws GraphirError for an unknown bot', async () => {
      const error = await client.executeBot('no-such-bot', 'x').catch((e) => e);
      expect(error).toBeInstanceOf(GraphirError);
      expect(error.status).toBe(404);
      expect(error.outcome.resourceType).toBe('OperationOutcome');
    });
  });

  describe('one suite for the client and the bot `fhir` argument', () => {
    const checks = sharedChecks();

    it.each(checks.map(([name, check]) => [name, check] as const))(
      'GraphirClient: %s',
      async (_name, check) => {
        await check(client, `c${Math.random().toString(36).slice(2, 10)}`);
      },
    );

    it('inside a bot: every check passes', async () => {
      const bot = await client.createResource({
        resourceType: 'Bot',
        name: 'shared checks',
        code: SHARED_CHECKS_BOT,
        timeout: 30,
      });
      const tag = `b${Math.random().toString(36).slice(2, 10)}`;
      const results: { name: string; ok: boolean; message?: string }[] = await client.executeBot(
        bot.id!,
        { tag },
      );
      expect(results.map((r) => r.name)).toEqual(checks.map(([name]) => name));
      for (const result of results)
        expect(result, result.name).toEqual({ name: result.name, ok: true });
    });
  });
});

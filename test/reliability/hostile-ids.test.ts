/**
 * Hostile ids in every interaction that takes one — read, version read, history, update, delete,
 * Bot `$execute`, instance `$graphql`: path traversal (`../`, `%2e%2e%2f`, `..%2F`), U+0000,
 * ids past 64 characters, unicode, broken escapes. An id that is not a FHIR id
 * (`[A-Za-z0-9\-.]{1,64}`) gets a 4xx with an OperationOutcome and nothing is written; a valid
 * one works (update creates it, read and history find it, delete deletes it), so the property
 * checks both sides. Requests go through node:http, which sends the path exactly as written.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedVersions } from '../support/stored-versions.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { expectOutcome, sendRaw, tryInputs, type Answer } from './hostile-harness.js';

const FHIR_ID = /^[A-Za-z0-9\-.]{1,64}$/;
const SENTINEL = { resourceType: 'Patient', id: 'sentinel', name: [{ family: 'Sentinel' }] };

/** Path segments as sent on the wire: none of them names a FHIR id. */
const HOSTILE_SEGMENTS = [
  '../sentinel',
  '../../admin/projects',
  '..%2Fsentinel',
  '%2e%2e%2fsentinel',
  '%2e%2e%2f%2e%2e%2fadmin',
  '..%5Csentinel',
  'sentinel%2F..',
  'a%2Fb',
  '%00',
  'sentinel%00',
  '%00..%2F',
  'x'.repeat(65),
  'x'.repeat(8000),
  '%C3%A9',
  '%F0%9F%98%80',
  '%E2%80%AE',
  '%FF%FE',
  '%',
  '%zz',
  'sentinel%27--',
  'sentinel%20OR%201%3D1',
  '%2A',
];

describe.each(await availableEngines())('hostile ids on %s', (engine) => {
  let server: TestServer;
  let botId: string;
  beforeAll(async () => {
    server = await startTestServer(engine);
    expect((await server.fhir('/Patient/sentinel', { method: 'PUT', body: SENTINEL })).status).toBe(
      201,
    );
    const bot = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', code: 'export async function handler() { return "ran"; }' },
    });
    botId = (await bot.json()).id;
  });
  afterAll(() => server?.stop());

  const call = (method: string, path: string, body?: string, contentType?: string) =>
    sendRaw(server.url, `/fhir/R4${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${server.project.token}`,
        ...(contentType ? { 'Content-Type': contentType } : {}),
      },
      body,
    });
  /** Every interaction that takes an id, with `segment` as the id's path segment. */
  const interactions = (segment: string, id: string) => ({
    update: () =>
      call(
        'PUT',
        `/Patient/${segment}`,
        JSON.stringify({ ...SENTINEL, id }),
        'application/fhir+json',
      ),
    read: () => call('GET', `/Patient/${segment}`),
    vread: () => call('GET', `/Patient/${segment}/_history/1`),
    history: () => call('GET', `/Patient/${segment}/_history`),
    graphql: () => call('GET', `/Patient/${segment}/$graphql?query=%7Bid%7D`),
    execute: () => call('POST', `/Bot/${segment}/$execute`, 'x', 'text/plain'),
    delete: () => call('DELETE', `/Patient/${segment}`),
  });
  const expectSentinelIntact = async () => {
    const answer = await call('GET', '/Patient/sentinel');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject(SENTINEL);
    expect(answer.body.meta.versionId).toBe('1');
  };

  it.each(HOSTILE_SEGMENTS.map((s) => [s.length > 40 ? `${s.slice(0, 12)}… (${s.length})` : s, s]))(
    '%s: every interaction gets a 4xx with an OperationOutcome, nothing is written',
    async (_label, segment) => {
      const before = await storedVersions(server);
      // The id in the body is the segment decoded, as a server would read it (or as sent).
      let decoded = segment;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        // kept as sent
      }
      for (const [name, run] of Object.entries(interactions(segment, decoded))) {
        const answer = await run();
        expect(answer.status, `${name}: ${answer.text.slice(0, 200)}`).not.toBe(200);
        expectOutcome(answer);
      }
      expect(await storedVersions(server)).toBe(before);
      await expectSentinelIntact();
    },
  );

  it('a real Bot runs by id, so the $execute refusals above are about the id', async () => {
    const answer = await call('POST', `/Bot/${botId}/$execute`, 'x', 'text/plain');
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('ran');
    // Its AuditEvent is written after the response: let it land before others count versions.
    await server.settled();
  });

  it('random ids, escaped: valid FHIR ids work in every interaction, others get a 4xx', async () => {
    const hostileChar = fc.constantFrom(
      '.',
      '/',
      '\\',
      '%',
      '\0',
      '-',
      'a',
      'Z',
      '9',
      '😀',
      'é',
      ' ',
      "'",
    );
    const id = fc
      .oneof(
        fc.stringMatching(/^[A-Za-z0-9\-.]{1,64}$/),
        fc.string({ unit: hostileChar, minLength: 1, maxLength: 80 }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
        fc.stringMatching(/^[A-Za-z0-9]{60,70}$/),
      )
      .filter((value) => value !== SENTINEL.id);
    const tally = await tryInputs(
      `random ids in every interaction (${engine})`,
      id,
      async (value, tally) => {
        const valid = FHIR_ID.test(value);
        const run = interactions(encodeURIComponent(value), value);
        const versions = await storedVersions(server);
        const expectRefused = async (answer: Answer, name: string) => {
          expect(
            answer.status,
            `${name} ${JSON.stringify(value)}: ${answer.text.slice(0, 200)}`,
          ).not.toBe(200);
          expectOutcome(answer);
        };
        const updated = await run.update();
        if (!valid) {
          for (const [name, interaction] of Object.entries(run))
            await expectRefused(name === 'update' ? updated : await interaction(), name);
          expect(await storedVersions(server)).toBe(versions);
          tally.add('refused');
          return;
        }
        // A valid id: update creates it (or, when drawn again, a new version), then each
        // interaction finds it, and delete deletes it.
        expect([200, 201], updated.text.slice(0, 200)).toContain(updated.status);
        expect(await storedVersions(server)).toBe(versions + 1);
        const read = await run.read();
        expect(read.status).toBe(200);
        expect(read.body).toMatchObject({ ...SENTINEL, id: value });
        expect((await run.history()).body).toMatchObject({
          resourceType: 'Bundle',
          type: 'history',
        });
        expect((await run.vread()).status).toBe(200);
        expect((await run.graphql()).body).toEqual({ data: { id: value } });
        const execute = await run.execute();
        expect(execute.status).toBe(404);
        expectOutcome(execute);
        expect((await run.delete()).status).toBe(200);
        expect(await storedVersions(server)).toBe(versions + 2);
        expect((await run.read()).status).toBe(410);
        tally.add('valid');
      },
      80,
    );
    expect(tally.count('refused')).toBeGreaterThan(0);
    expect(tally.count('valid')).toBeGreaterThan(0);
    await expectSentinelIntact();
  });
});

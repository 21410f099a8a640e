/**
 * Random and broken resources through FHIR REST writes (create, update, transaction): a Patient
 * broken in a way FHIR forbids gets 400 with an OperationOutcome and nothing is stored; a valid
 * one is stored as sent. Random JSON and random bytes as bodies never get a 500, and what is
 * stored of them reads back as sent. Then bodies that attack the parser: deep nesting,
 * `__proto__`, escapes PostgreSQL cannot store; and values too long to index.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedVersions } from '../support/stored-versions.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { expectOutcome, send, tryInputs } from './hostile-harness.js';
import { patientCase, type Json } from './hostile-patients.js';

/** Letters and digits that do not compress (a compressed index entry would still fit). */
const randomText = (length: number) =>
  randomBytes(length).toString('base64').replace(/[+/=]/g, 'x').slice(0, length);

/** The resource as stored, without what the server adds. */
const asSent = (stored: Json): Json => {
  const { meta: _meta, ...rest } = stored;
  return rest;
};

describe.each(await availableEngines())('hostile resources over REST on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  const write = (
    method: string,
    path: string,
    body: string,
    contentType = 'application/fhir+json',
  ) =>
    send(`${server.base}${path}`, {
      method,
      headers: { Authorization: `Bearer ${server.project.token}`, 'Content-Type': contentType },
      body,
    });
  const readBack = async (type: string, id: string): Promise<Json> => {
    const answer = await send(`${server.base}/${type}/${id}`, {
      headers: { Authorization: `Bearer ${server.project.token}` },
    });
    expect(answer.status).toBe(200);
    return answer.body;
  };

  it('Patients, valid or broken on purpose: stored as sent, or 400 and nothing stored', async () => {
    const input = fc.record({
      case: patientCase,
      how: fc.constantFrom('create', 'update'),
      id: fc.uuid(),
    });
    const tally = await tryInputs(
      `valid and broken Patients, create and update (${engine})`,
      input,
      async ({ case: { patient, broken }, how, id }, tally) => {
        const versions = await storedVersions(server);
        const sent = how === 'update' ? { id, ...patient } : patient;
        const answer =
          how === 'create'
            ? await write('POST', '/Patient', JSON.stringify(sent))
            : await write('PUT', `/Patient/${id}`, JSON.stringify(sent));
        const context = `${broken ?? 'valid'}: ${answer.status} ${answer.text.slice(0, 300)}`;
        if (broken) {
          expect(answer.status, context).toBe(400);
          expectOutcome(answer, [400]);
          expect(await storedVersions(server)).toBe(versions);
          tally.add('refused');
        } else {
          // An update of an id drawn before is a new version of it: 200 rather than 201.
          expect(how === 'update' ? [200, 201] : [201], context).toContain(answer.status);
          expect(await storedVersions(server)).toBe(versions + 1);
          expect(asSent(await readBack('Patient', answer.body.id))).toEqual({
            ...sent,
            id: answer.body.id,
          });
          tally.add('stored');
        }
      },
      150,
    );
    expect(tally.count('refused')).toBeGreaterThan(0);
    expect(tally.count('stored')).toBeGreaterThan(0);
  });

  it('transactions with a broken entry store nothing; whole valid ones store every entry', async () => {
    const tally = await tryInputs(
      `transactions of valid and broken Patients (${engine})`,
      fc.array(patientCase, { minLength: 1, maxLength: 5 }),
      async (cases, tally) => {
        const versions = await storedVersions(server);
        const bundle = {
          resourceType: 'Bundle',
          type: 'transaction',
          entry: cases.map(({ patient }) => ({
            request: { method: 'POST', url: 'Patient' },
            resource: patient,
          })),
        };
        const answer = await write('POST', '', JSON.stringify(bundle));
        const broken = cases.filter((c) => c.broken).map((c) => c.broken);
        const context = `${broken.join(', ') || 'valid'}: ${answer.status} ${answer.text.slice(0, 300)}`;
        if (broken.length > 0) {
          expect(answer.status, context).toBe(400);
          expectOutcome(answer, [400]);
          expect(await storedVersions(server)).toBe(versions);
          tally.add('refused');
        } else {
          expect(answer.status, context).toBe(200);
          expect(await storedVersions(server)).toBe(versions + cases.length);
          tally.add('stored');
        }
      },
      60,
    );
    expect(tally.count('refused')).toBeGreaterThan(0);
    expect(tally.count('stored')).toBeGreaterThan(0);
  });

  it('random JSON as a Patient: never a 500; what is stored reads back as sent', async () => {
    const randomResource = fc.oneof(
      fc.jsonValue({ maxDepth: 4 }),
      fc
        .dictionary(
          fc.oneof(
            fc.constantFrom(
              'active',
              'gender',
              'birthDate',
              'name',
              'id',
              'meta',
              '_active',
              'contained',
            ),
            fc.string(),
          ),
          fc.jsonValue({ maxDepth: 3 }),
          { maxKeys: 4 },
        )
        .map((fields) => ({ resourceType: 'Patient', ...fields })),
    );
    const tally = await tryInputs(
      `random JSON as a Patient (${engine})`,
      randomResource,
      async (value, tally) => {
        const versions = await storedVersions(server);
        const answer = await write('POST', '/Patient', JSON.stringify(value));
        const sent = { ...(value as Json) };
        // The server sets meta (versionId, lastUpdated) and the id of a create itself.
        delete sent.meta;
        delete sent.id;
        if (answer.status === 201) {
          expect(await storedVersions(server)).toBe(versions + 1);
          const stored = asSent(await readBack('Patient', answer.body.id));
          expect({ ...stored, id: undefined }).toEqual({ ...sent, id: undefined });
          tally.add('stored');
        } else {
          expectOutcome(answer);
          expect(await storedVersions(server)).toBe(versions);
          tally.add(`refused ${answer.status}`);
        }
      },
      200,
    );
    expect(tally.count('refused 400')).toBeGreaterThan(0);
  });

  it('random bytes as a FHIR JSON body: 400 with an OperationOutcome, nothing stored', async () => {
    const tally = await tryInputs(
      `random bytes as a body (${engine})`,
      fc.oneof(
        fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.json().map((json) => json.slice(0, Math.max(0, json.length - 1))),
      ),
      async (body, tally) => {
        const versions = await storedVersions(server);
        const answer = await write('POST', '/Patient', body);
        expectOutcome(answer);
        expect(await storedVersions(server)).toBe(versions);
        tally.add(`refused ${answer.status}`);
      },
      150,
    );
    expect(tally.count('refused 400')).toBeGreaterThan(0);
  });

  it.each([
    ['a no-break space', '\u00a0'],
    ['an ideographic space', '\u3000'],
    ['a line separator', '\u2028'],
    ['a zero-width no-break space', '\ufeff'],
    ['a vertical tab', '\u000b'],
  ])('a name holding %s is valid FHIR: stored as sent', async (_name, space) => {
    const versions = await storedVersions(server);
    const patient = { resourceType: 'Patient', name: [{ family: `Yama${space}da` }] };
    const answer = await write('POST', '/Patient', JSON.stringify(patient));
    expect(answer.status, answer.text.slice(0, 300)).toBe(201);
    expect(asSent(await readBack('Patient', answer.body.id))).toEqual({
      ...patient,
      id: answer.body.id,
    });
    expect(await storedVersions(server)).toBe(versions + 1);
  });

  const nested = (depth: number) =>
    `{"resourceType":"Patient","extension":[${'{"url":"http://x","extension":['.repeat(depth)}${']}'.repeat(depth)}]}`;
  it.each([
    ['extensions nested 150 deep (past the validator depth)', nested(150)],
    ['extensions nested 100000 deep', nested(100_000)],
    [
      'arrays nested 100000 deep',
      `{"resourceType":"Patient","name":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
    ],
    ['a __proto__ property', '{"resourceType":"Patient","__proto__":{"active":true}}'],
    ['a constructor property', '{"resourceType":"Patient","constructor":{"name":"x"}}'],
    ['a JSON array', '[{"resourceType":"Patient"}]'],
    ['a JSON string', '"Patient"'],
    ['JSON null', 'null'],
    ['an empty object', '{}'],
    ['nothing', ''],
    ['a byte order mark and garbage', '\ufeff{"resourceType":'],
    ['a lone surrogate escape', '{"resourceType":"Patient","name":[{"family":"\\udc00"}]}'],
    ['a U+0000 escape in a key', '{"resourceType":"Patient","\\u0000":1}'],
  ])('%s: 4xx with an OperationOutcome, nothing stored', async (_name, body) => {
    const versions = await storedVersions(server);
    expectOutcome(await write('POST', '/Patient', body));
    expect(await storedVersions(server)).toBe(versions);
  });

  it.each([
    ['an identifier of 6000 random characters', { identifier: [{ value: randomText(6000) }] }],
    ['a family name of 500000 é', { name: [{ family: 'é'.repeat(500_000) }] }],
  ])(
    '%s (valid FHIR, too long for a search index entry): 422, nothing stored',
    async (_name, fields) => {
      const versions = await storedVersions(server);
      const answer = await write(
        'POST',
        '/Patient',
        JSON.stringify({ resourceType: 'Patient', ...fields }),
      );
      expectOutcome(answer, [422]);
      expect(await storedVersions(server)).toBe(versions);
    },
  );

  it('a 200 kB narrative (not searchable) is stored whole; a body over the limit gets 413', async () => {
    const versions = await storedVersions(server);
    const div = `<div xmlns="http://www.w3.org/1999/xhtml">${randomText(200_000)}</div>`;
    const answer = await write(
      'POST',
      '/Patient',
      JSON.stringify({ resourceType: 'Patient', text: { status: 'generated', div } }),
    );
    expect(answer.status, answer.text.slice(0, 300)).toBe(201);
    expect((await readBack('Patient', answer.body.id)).text).toEqual({ status: 'generated', div });
    expect(await storedVersions(server)).toBe(versions + 1);
    const small = await startTestServer(engine, { GRAPHIR_MAX_BODY_BYTES: '1000' });
    try {
      const over = await send(`${small.base}/Patient`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${small.project.token}`,
          'Content-Type': 'application/fhir+json',
        },
        body: JSON.stringify({ resourceType: 'Patient', name: [{ family: 'x'.repeat(2000) }] }),
      });
      expectOutcome(over, [413]);
      expect(await storedVersions(small)).toBe(0);
    } finally {
      await small.stop();
    }
  });
});

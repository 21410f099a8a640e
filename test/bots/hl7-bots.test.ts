/**
 * HL7 bots written for Medplum, run unchanged over HTTP `$execute`: `event.input` is an
 * Hl7Message with Medplum's API and numbering; an HL7 request is answered as ER7 when the handler
 * returns a message or a string, including an ACK built by @medplum/core's own class bundled
 * into the bot, and by the usual rule otherwise (an object as JSON).
 */
import { readFileSync } from 'node:fs';
import { bundleBot } from '../../runtime/cli/bot-bundle.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const HL7 = 'x-application/hl7-v2+er7';
const ADT = readFileSync('test/fixtures/hl7/adt-a01.hl7', 'utf8');
const ORU = readFileSync('test/fixtures/hl7/oru-r01.hl7', 'utf8');

/** As Medplum's HL7 example bots: find or create the patient of an ADT, answer with an ACK. */
const ADT_BOT = `export async function handler(medplum, event) {
  const input = event.input;
  const messageType = input.getSegment('MSH')?.getField(9)?.getComponent(1);
  const messageSubtype = input.getSegment('MSH')?.getField(9)?.getComponent(2);
  if (messageType !== 'ADT') return input.buildAck({ ackCode: 'AR' });
  const pid = input.getSegment('PID');
  const mrn = pid?.getField(3)?.getComponent(1, undefined, 1);
  let patient = await medplum.searchOne('Patient', 'identifier=urn:mrn|' + mrn);
  if (!patient) {
    patient = await medplum.createResource({
      resourceType: 'Patient',
      identifier: [{ system: 'urn:mrn', value: mrn }],
      name: [{ family: pid?.getField(5)?.getComponent(1), given: [pid?.getComponent(5, 2), pid?.getComponent(5, 3)] }],
      address: [{ line: [pid?.getComponent(11, 1)], city: pid?.getComponent(11, 3) }],
    });
  }
  console.log('ADT', messageSubtype, patient.id);
  return input.buildAck();
}`;

/** A bot that bundles @medplum/core's Hl7Message and answers with that class's own ACK. */
async function medplumBundledBot(): Promise<string> {
  return (await bundleBot('test/fixtures/bots/medplum-hl7-ack.ts')).code;
}

describe('HL7 bots over $execute', () => {
  let server: TestServer;

  const createBot = async (code: string): Promise<string> => {
    const response = await server.fhir('/Bot', {
      method: 'POST',
      body: { resourceType: 'Bot', name: 'hl7', code },
    });
    const body = await response.json();
    if (response.status !== 201) throw new Error(JSON.stringify(body));
    return body.id;
  };
  const execute = (id: string, body: string, contentType = HL7) =>
    server.fhir(`/Bot/${id}/$execute`, {
      method: 'POST',
      body,
      headers: { 'Content-Type': contentType },
    });
  const handler = (body: string) =>
    createBot(`export async function handler(fhir, event) { ${body} }`);

  beforeAll(async () => {
    server = await startTestServer('pglite');
  });
  afterAll(() => server?.stop());

  it('runs a Medplum ADT bot unchanged: fields as objects, values decoded, an ACK as ER7', async () => {
    const id = await createBot(ADT_BOT);
    const response = await execute(id, ADT);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(HL7);
    const [msh, msa] = (await response.text()).split('\r');
    expect(msh).toMatch(
      /^MSH\|\^~\\&\|GRAPHIR\|GRAPHIR_FAC\|EPIC\|ST_MARYS\^2\.16\.840\.1\.113883\.3\.72\^ISO\|\d{14}/,
    );
    expect(msh).toMatch(/\|\|ACK\^A01\^ACK\|\d{13}\|P\|2\.5\.1$/);
    expect(msa).toBe('MSA|AA|MSG00001|OK');
    const found = await (await server.fhir('/Patient?identifier=urn:mrn|MRN0012345')).json();
    expect(found.entry.map((e: { resource: unknown }) => e.resource)).toMatchObject([
      {
        name: [{ family: "O'Brien", given: ['Mary', 'Anne'] }],
        address: [{ line: ['123 Main St&Apt 4B'], city: 'Springfield' }],
      },
    ]);
    // A second run finds the patient instead of creating another.
    expect((await execute(id, ADT)).status).toBe(200);
    expect((await (await server.fhir('/Patient?identifier=urn:mrn|MRN0012345')).json()).total).toBe(
      1,
    );
    // Not an ADT: rejected, in ER7.
    const rejected = await (await execute(id, ORU)).text();
    expect(rejected.split('\r')[1]).toBe('MSA|AR|LAB20240315-0042|Application Reject');
  });

  it('answers an ACK built by @medplum/core bundled into the bot as ER7', async () => {
    const id = await createBot(await medplumBundledBot());
    const response = await execute(id, ADT);
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(response.headers.get('content-type')).toBe(HL7);
    expect(text).toMatch(
      /^MSH\|\^~\\&\|GRAPHIR\|GRAPHIR_FAC\|EPIC\|.*\|ACK\^A01\^ACK\|\d+\|P\|2\.5\.1\rMSA\|AA\|MSG00001\|OK$/,
    );
  });

  it.each([
    ['the input itself', 'return event.input;', HL7, ADT.trimEnd().split('\n').join('\r')],
    ['a string', "return 'MSH|^~\\\\&|A\\rMSA|AA|1';", HL7, 'MSH|^~\\&|A\rMSA|AA|1'],
    ['a plain object: JSON', 'return { ok: true };', 'application/json', '{"ok":true}'],
    [
      'an object with its own toString: JSON, not a message',
      "return { a: 1, toString: () => 'MSH|^~\\\\&|A' };",
      'application/json',
      '{"a":1}',
    ],
    [
      'a FHIR resource: FHIR JSON',
      "return { resourceType: 'Patient', id: 'p' };",
      'application/fhir+json',
      '{"resourceType":"Patient","id":"p"}',
    ],
    [
      'an array: JSON',
      "return ['MSH|^~\\\\&|A', 'MSA|AA|1'];",
      'application/json',
      '["MSH|^~\\\\&|A","MSA|AA|1"]',
    ],
    ['a number: JSON', 'return 42;', 'application/json', '42'],
  ])('answers an HL7 request whose handler returns %s', async (_name, body, type, want) => {
    const response = await execute(await handler(body), ADT);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain(type);
    expect(await response.text()).toBe(want);
  });

  it('answers a segment or a field returned to an HL7 request as JSON, never [object Object]', async () => {
    for (const body of [
      "return event.input.getSegment('PID');",
      'return event.input.header.getField(9);',
    ]) {
      const response = await execute(await handler(body), ADT);
      expect(response.status, body).toBe(200);
      expect(response.headers.get('content-type'), body).toContain('application/json');
      expect(await response.text(), body).not.toContain('[object Object]');
    }
  });

  it('answers an HL7 request whose handler returns nothing with an OperationOutcome', async () => {
    const response = await execute(await handler('return;'), ADT);
    expect(response.status).toBe(200);
    expect((await response.json()).resourceType).toBe('OperationOutcome');
  });

  it('fails an HL7 request whose answer cannot become text, with the error', async () => {
    const response = await execute(
      await handler(
        "return { segments: [], getSegment() {}, toString() { throw new Error('no text for you'); } };",
      ),
      ADT,
    );
    expect(response.status).toBe(400);
    const outcome = await response.json();
    expect(outcome.issue[0]).toMatchObject({ code: 'processing' });
    expect(outcome.issue[0].diagnostics).toContain('no text for you');
  });

  it('answers other input as JSON unless the value is a Graphir Hl7Message', async () => {
    const medplums = await createBot(await medplumBundledBot());
    const json = JSON.stringify({ er7: ADT });
    // @medplum/core's message is an object like any other: JSON, as Medplum would answer it.
    const dumped = await execute(medplums, ADT, 'text/plain');
    expect(dumped.status, await dumped.clone().text()).toBe(200);
    expect(dumped.headers.get('content-type')).toContain('application/json');
    expect(await dumped.json()).toMatchObject({ context: { fieldSeparator: '|' } });
    const ours = await handler('return Hl7Message.parse(event.input.er7).buildAck();');
    const acked = await execute(ours, json, 'application/json');
    expect(acked.headers.get('content-type')).toBe(HL7);
    expect(await acked.text()).toMatch(/\rMSA\|AA\|MSG00001\|OK$/);
  });

  it('gives every bot the four classes, ahead or on first use', async () => {
    const probe = `const [Message, Segment, Field, Context] = ['Message', 'Segment', 'Field', 'Context'].map((n) => globalThis['Hl' + '7' + n]);
      const context = new Context();
      const segment = new Segment(['PID', '1', Field.parse('Doe^Jane', context)], context);
      const message = new Message(['MSH|^~\\\\&|A', segment], context);
      return { pid: message.getSegment('PID').getComponent(2, 2), msh2: context.getMsh2(), isMessage: Message.parse(message.toString()) instanceof Message,
        enumerable: Object.keys(globalThis).filter((k) => k.startsWith('Hl' + '7')) };`;
    const want = { pid: 'Jane', msh2: '^~\\&', isMessage: true, enumerable: [] };
    // Not naming the classes: compiled on first read.
    const lazy = await execute(await handler(probe), '{}', 'application/json');
    expect(await lazy.json()).toEqual(want);
    // Naming them: compiled ahead.
    const eager = await execute(await handler(`void Hl7Field; ${probe}`), '{}', 'application/json');
    expect(await eager.json()).toEqual(want);
    // HL7 input: compiled ahead (the answer, an object, is ER7).
    const hl7 = await execute(
      await handler(`${probe.replace(/return (\{[\s\S]*\});$/, 'return JSON.stringify($1);')}`),
      ADT,
    );
    expect(JSON.parse(await hl7.text())).toEqual(want);
  });

  it('refuses a body that is not HL7 v2 before any bot runs', async () => {
    const id = await handler('return event.input.buildAck();');
    for (const [body, reason] of [
      ['PID|1', 'must start with an MSH segment'],
      ['MSH|^~', 'too short'],
      ['MSH|^~^&|A', 'must be distinct'],
    ]) {
      const response = await execute(id, body);
      expect(response.status, body).toBe(400);
      const outcome = await response.json();
      expect(outcome.issue[0].diagnostics).toContain('The body is not an HL7 v2 message');
      expect(outcome.issue[0].diagnostics).toContain(reason);
    }
  });
});

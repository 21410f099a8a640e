/**
 * Bots written as Medplum's public examples are, in TypeScript with npm imports
 * (test/bots/examples/), deployed with `graphir bot deploy` as a user deploys them and run over
 * HTTP with the inputs a caller sends; each outcome is checked through REST.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectionTo, runGraphir, type CliRun } from '../support/graphir-cli.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/** Each deploy starts the command (a Node process with tsx): seconds each on a loaded machine. */
vi.setConfig({ testTimeout: 180_000, hookTimeout: 300_000 });

const BOTS = 'urn:example:bots';
const EXAMPLES = [
  'hello-patient',
  'adt-feed',
  'finalize-report',
  'bmi',
  'account-setup',
  'lab-order',
  'greet-all',
] as const;
const ADT = readFileSync('test/fixtures/hl7/adt-a01.hl7', 'utf8');
const MRN_SYSTEM = 'urn:example:st-marys:mrn';

let server: TestServer;
let lab: Server;
let labUrl: string;
const labOrders: { authorization?: string; body: unknown }[] = [];
const deployed = new Map<string, CliRun>();

function deploy(name: string): Promise<CliRun> {
  return runGraphir(
    ['bot', 'deploy', `test/bots/examples/${name}.ts`, '--identifier', `${BOTS}|${name}`],
    { env: connectionTo(server) },
  );
}

/** A lab's order API on loopback: `/orders` answers an order number, `/slow/orders` never does. */
function startLab(): Promise<void> {
  lab = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.url === '/slow/orders') return; // answers nothing: the bot's time limit ends it
    if (request.method !== 'POST' || request.url !== '/orders') {
      response.writeHead(404).end();
      return;
    }
    labOrders.push({
      authorization: request.headers.authorization,
      body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
    });
    response.writeHead(201, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ orderNumber: `L-${1000 + labOrders.length}` }));
  });
  return new Promise((resolve) =>
    lab.listen(0, '127.0.0.1', () => {
      labUrl = `http://127.0.0.1:${(lab.address() as AddressInfo).port}`;
      resolve();
    }),
  );
}

const execute = async (name: string, body: string, contentType: string) => {
  const response = await server.fhir(`/Bot/$execute?identifier=${BOTS}|${name}`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': contentType },
  });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type'), text };
};
const executeJson = async (name: string, input: unknown, contentType = 'application/json') => {
  const answer = await execute(name, JSON.stringify(input), contentType);
  if (answer.status !== 200) throw new Error(`${name}: ${answer.status} ${answer.text}`);
  return JSON.parse(answer.text);
};
const create = async <T extends object>(resource: T): Promise<T & { id: string }> => {
  const response = await server.fhir(`/${(resource as { resourceType: string }).resourceType}`, {
    method: 'POST',
    body: resource,
  });
  const body = await response.json();
  if (response.status !== 201) throw new Error(JSON.stringify(body));
  return body;
};
const search = async (query: string) => (await server.fhir(`/${query}`)).json();
const read = async (reference: string) => (await server.fhir(`/${reference}`)).json();
const setSecret = (name: string, value: string) =>
  server.call(`/admin/projects/${server.project.projectId}/secrets/${name}`, {
    method: 'PUT',
    body: { value },
    token: server.project.token,
  });

beforeAll(async () => {
  await startLab();
  server = await startTestServer('pglite', { GRAPHIR_EGRESS_ALLOW: '127.0.0.1' });
  // One deploy after another: each is a process of its own, and the machine has two cores.
  for (const name of EXAMPLES) deployed.set(name, await deploy(name));
});

afterAll(async () => {
  await server?.stop();
  lab?.close();
});

describe('example bots deployed from TypeScript', () => {
  it('are each bundled, stored with a source map, and their size printed', async () => {
    for (const name of EXAMPLES) {
      const run = deployed.get(name)!;
      expect(run, `${name}: ${run.stderr}`).toMatchObject({ code: 0 });
      expect(run.stdout + run.stderr).toMatch(/\d(\.\d+)? ?(B|KB|kB|KiB|MB|MiB)\b/);
      const bundle = await search(`Bot?identifier=${BOTS}|${name}`);
      expect(bundle.total).toBe(1);
      const bot = bundle.entry[0].resource;
      expect(bot.sourceMap, name).toEqual(expect.any(String));
      expect(JSON.parse(bot.sourceMap).sources.join(' ')).toContain(`${name}.ts`);
    }
    // The BMI bot carries @medplum/core's helpers inside it; hello-patient imports types only.
    const code = async (name: string) =>
      (await search(`Bot?identifier=${BOTS}|${name}`)).entry[0].resource.code as string;
    expect((await code('bmi')).length).toBeGreaterThan(10 * (await code('hello-patient')).length);
  });

  it('hello-patient greets the Patient it is given and keeps the greeting', async () => {
    const patient = await create({
      resourceType: 'Patient',
      name: [{ given: ['Ada'], family: 'Lovelace' }],
    });
    const answer = await execute('hello-patient', JSON.stringify(patient), 'application/fhir+json');
    expect(answer).toMatchObject({ status: 200, text: 'Hello Ada Lovelace!' });
    expect(answer.type).toMatch(/^text\/plain/);
    const kept = await search(`Communication?subject=Patient/${patient.id}`);
    expect(kept.entry.map((e: any) => e.resource.payload[0].contentString)).toEqual([
      'Hello Ada Lovelace!',
    ]);
  });

  it('adt-feed upserts the Patient of an ADT^A01 with the HL7 API and answers an ACK in ER7', async () => {
    const first = await execute('adt-feed', ADT, 'x-application/hl7-v2+er7');
    expect(first.status, first.text).toBe(200);
    expect(first.type).toMatch(/^x-application\/hl7-v2\+er7/);
    const segments = first.text.split(/\r\n?|\n/);
    expect(segments[0]).toMatch(/^MSH\|\^~\\&\|/);
    expect(segments.find((s) => s.startsWith('MSA|'))).toMatch(/^MSA\|AA\|MSG00001/);

    const found = await search(`Patient?identifier=${MRN_SYSTEM}|MRN0012345`);
    expect(found.total).toBe(1);
    expect(found.entry[0].resource).toMatchObject({
      name: [{ family: "O'Brien", given: ['Mary', 'Anne'] }],
      birthDate: '1962-03-15',
      gender: 'female',
      // PID-11's `\T\` is HL7's escape for `&`: decoded on read.
      address: [{ line: ['123 Main St&Apt 4B'], city: 'Springfield', postalCode: '62701' }],
    });
    // The same message again (as an A08 would): the same Patient, a new version.
    const again = await execute(
      'adt-feed',
      ADT.replace('ADT^A01^ADT_A01', 'ADT^A08^ADT_A01'),
      'x-application/hl7-v2+er7',
    );
    expect(again.status, again.text).toBe(200);
    const after = await search(`Patient?identifier=${MRN_SYSTEM}|MRN0012345`);
    expect(after.total).toBe(1);
    expect(after.entry[0].resource.meta.versionId).toBe('2');
  });

  it('finalize-report makes each result Observation and the report final, through readReference', async () => {
    const observation = (value: number) =>
      create({
        resourceType: 'Observation',
        status: 'preliminary',
        code: { text: 'glucose' },
        valueQuantity: { value, unit: 'mg/dL' },
      });
    const results = [await observation(98), await observation(104)];
    const report = await create({
      resourceType: 'DiagnosticReport',
      status: 'preliminary',
      code: { text: 'glucose panel' },
      result: results.map((o) => ({ reference: `Observation/${o.id}` })),
    });
    const answer = await executeJson('finalize-report', report, 'application/fhir+json');
    expect(answer).toMatchObject({
      resourceType: 'DiagnosticReport',
      id: report.id,
      status: 'final',
    });
    for (const result of results) {
      expect(await read(`Observation/${result.id}`)).toMatchObject({
        status: 'final',
        meta: { versionId: '2' },
      });
    }
    expect(await read(`DiagnosticReport/${report.id}`)).toMatchObject({ status: 'final' });
  });

  it('bmi computes a BMI Observation with @medplum/core helpers bundled in', async () => {
    const patient = await create({ resourceType: 'Patient', birthDate: '1980-06-01' });
    const vital = (code: string, value: number, unit: string) =>
      create({
        resourceType: 'Observation',
        status: 'final',
        code: { coding: [{ system: 'http://loinc.org', code }] },
        subject: { reference: `Patient/${patient.id}` },
        effectiveDateTime: '2026-11-01',
        valueQuantity: { value, unit },
      });
    await vital('8302-2', 180, 'cm');
    await vital('29463-7', 81, 'kg');
    const answer = await executeJson('bmi', { reference: `Patient/${patient.id}` });
    expect(answer).toEqual({
      bmi: 25,
      observation: expect.stringMatching(/^Observation\/[\w-]+$/),
      age: expect.stringMatching(/^0\d\dY$/),
    });
    const stored = await read(answer.observation);
    expect(stored).toMatchObject({
      code: { coding: [{ code: '39156-5' }] },
      subject: { reference: `Patient/${patient.id}` },
      valueQuantity: { value: 25 },
    });
  });

  it('account-setup makes the Organization once and the practitioners in one transaction', async () => {
    const input = {
      organization: { name: 'Northside Clinic', npi: '1234567893' },
      practitioners: [
        { family: 'Okafor', given: 'Ngozi', npi: '1111111112', role: 'physician' },
        { family: 'Lindqvist', given: 'Sven', npi: '2222222224', role: 'nurse' },
      ],
    };
    const first = await executeJson('account-setup', input);
    expect(first).toEqual({
      organization: expect.stringMatching(/^Organization\//),
      created: 2,
      existing: 0,
    });
    const second = await executeJson('account-setup', input);
    expect(second).toEqual({ organization: first.organization, created: 0, existing: 2 });
    const npi = 'http://hl7.org/fhir/sid/us-npi';
    expect((await search(`Organization?identifier=${npi}|1234567893`)).total).toBe(1);
    expect((await search(`Practitioner?identifier=${npi}|1111111112`)).total).toBe(1);
    const roles = await search(`PractitionerRole?organization=${first.organization}`);
    expect(roles.total).toBe(4);
  });

  it('lab-order sends the order to the lab with fetch and keeps its number; a lab that hangs is cut off', async () => {
    await setSecret('LAB_API_KEY', 'lab-key-1');
    await setSecret('LAB_API_URL', labUrl);
    const patient = await create({ resourceType: 'Patient' });
    const order = await create({
      resourceType: 'ServiceRequest',
      status: 'draft',
      intent: 'order',
      subject: { reference: `Patient/${patient.id}` },
      code: { coding: [{ system: 'http://loinc.org', code: '2345-7' }] },
    });
    const answer = await executeJson('lab-order', order, 'application/fhir+json');
    expect(answer).toMatchObject({ status: 'active', meta: { versionId: '2' } });
    expect(labOrders.at(-1)).toEqual({
      authorization: 'Bearer lab-key-1',
      body: { patient: `Patient/${patient.id}`, test: '2345-7' },
    });
    const stored = await read(`ServiceRequest/${order.id}`);
    expect(stored.identifier).toEqual([
      { system: 'urn:example:lab:order', value: `L-${1000 + labOrders.length}` },
    ]);

    await setSecret('LAB_API_URL', `${labUrl}/slow/`);
    const hung = await execute('lab-order', JSON.stringify(order), 'application/fhir+json');
    expect(hung.status).toBe(400);
    expect(JSON.parse(hung.text).issue[0].diagnostics).toMatch(/did not answer within 2000 ms/);
    expect((await read(`ServiceRequest/${order.id}`)).meta.versionId).toBe('2');
  });

  it('greet-all runs the hello-patient bot for each Patient it finds', async () => {
    const family = `Greet${Date.now()}`;
    await create({ resourceType: 'Patient', name: [{ given: ['Ann'], family }] });
    await create({ resourceType: 'Patient', name: [{ given: ['Bob'], family }] });
    const greetings: string[] = await executeJson('greet-all', { family });
    expect(greetings.sort()).toEqual([`Hello Ann ${family}!`, `Hello Bob ${family}!`]);
    const kept = await search(`Communication?_count=100`);
    const texts = kept.entry.map((e: any) => e.resource.payload[0].contentString);
    expect(texts).toEqual(expect.arrayContaining(greetings));
  });
});

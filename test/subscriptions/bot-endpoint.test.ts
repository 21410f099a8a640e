/**
 * Subscriptions whose endpoint is `Bot/{id}`: the bot runs with the resource as `event.input`
 * (`application/fhir+json`; for a delete, `{ deletedResource }`) and the delivery's headers,
 * as its author's call; a bot that throws fails the attempt, and after the last one the
 * Subscription goes to `error`. A bot's own writes trigger Subscriptions like any other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { createBot } from '../jobs/async-helpers.js';
import {
  deliveryEvents,
  eventually,
  INTERACTION,
  subscribe,
  write,
} from './subscription-support.js';

/** Writes what it was given as a Basic: the input, its content type and the headers. */
const RECORDING_BOT = `export async function handler(fhir, event) {
  await fhir.createResource({
    resourceType: 'Basic',
    code: { text: 'delivered' },
    subject: { reference: 'Patient/' + (event.input.id ?? event.input.deletedResource.id) },
    extension: [{ url: 'urn:test:event', valueString: JSON.stringify({
      input: event.input, contentType: event.contentType, headers: event.headers,
    }) }],
  });
}`;

describe.each(await availableEngines())('Bot endpoints on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine, { GRAPHIR_JOBS_MAX_ATTEMPTS: '2' });
  });
  afterAll(() => server?.stop());

  /** What the recording bot was given for the patient, once it ran `count` times. */
  const recorded = async (patientId: string, count = 1) => {
    const bundle = await eventually(
      async () => (await server.fhir(`/Basic?subject=Patient/${patientId}`)).json(),
      (b) => (b.entry ?? []).length >= count,
    );
    return bundle.entry.map((e: any) => JSON.parse(e.resource.extension[0].valueString));
  };

  it('runs the bot with the resource as event.input', async () => {
    const botId = await createBot(server, RECORDING_BOT);
    const subscriptionId = await subscribe(server, 'Patient?family=Botted', `Bot/${botId}`, {
      channel: { header: ['X-Source: subscription'] },
    });
    const patient = await write(server, 'POST', '/Patient', {
      resourceType: 'Patient',
      name: [{ family: 'Botted' }],
    });
    const [event] = await recorded(patient.id);
    expect(event.contentType).toBe('application/fhir+json');
    expect(event.input).toMatchObject({
      resourceType: 'Patient',
      id: patient.id,
      meta: { versionId: '1' },
    });
    expect(event.headers).toMatchObject({
      'X-Medplum-Subscription': subscriptionId,
      'X-Medplum-Interaction': 'create',
      'X-Source': 'subscription',
    });
    const [audit] = await eventually(
      () => deliveryEvents(server, subscriptionId),
      (found) => found.length === 1,
    );
    expect(audit.outcome).toBe('0');
  });

  it('gives a delete the deleted version as event.input.deletedResource', async () => {
    const botId = await createBot(server, RECORDING_BOT);
    await subscribe(server, 'Patient?family=Removed', `Bot/${botId}`, {
      extension: [{ url: INTERACTION, valueCode: 'delete' }],
    });
    const patient = await write(server, 'POST', '/Patient', {
      resourceType: 'Patient',
      name: [{ family: 'Removed' }],
    });
    await write(server, 'DELETE', `/Patient/${patient.id}`);
    const [event] = await recorded(patient.id);
    expect(event.input.deletedResource).toMatchObject({ id: patient.id, meta: { versionId: '1' } });
    expect(event.headers['X-Medplum-Deleted-Resource']).toBe(`Patient/${patient.id}`);
  });

  it('retries a bot that throws, then sets the Subscription to error', async () => {
    const botId = await createBot(
      server,
      `export async function handler() { throw new Error('no thanks'); }`,
    );
    const subscriptionId = await subscribe(server, 'Patient?family=Refusing', `Bot/${botId}`);
    await write(server, 'POST', '/Patient', {
      resourceType: 'Patient',
      name: [{ family: 'Refusing' }],
    });
    const stopped = await eventually(
      async () => (await server.fhir(`/Subscription/${subscriptionId}`)).json(),
      (s) => s.status === 'error',
    );
    expect(stopped.error).toMatch(/Failed 2 times.*no thanks/);
    const events = await eventually(
      () => deliveryEvents(server, subscriptionId),
      (found) => found.length === 2,
    );
    expect(events.every((e) => e.outcome === '4')).toBe(true);
  });
});

/**
 * Conditional updates that race: however many `PUT Patient?identifier=…` run at once — on one
 * server, or split over two servers on one PostgreSQL database — exactly one creates the Patient
 * (201), every other updates it (200), one Patient exists after, with a version for each. Racing
 * conditional creates of the same condition take the same lock: still one Patient.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import {
  serversSharingOneDatabase,
  startTestServer,
  type FhirSend,
  type TestServer,
} from '../support/test-server.js';

const engines = await availableEngines();
const RACERS = 6;

const patient = (identifier: string, racer: number) => ({
  resourceType: 'Patient',
  identifier: [{ system: 'urn:x', value: identifier }],
  name: [{ family: `Racer ${racer}` }],
});

/** RACERS conditional updates of one identifier, sent round-robin over `senders`, at once. */
async function race(senders: readonly FhirSend[], identifier: string) {
  const responses = await Promise.all(
    Array.from({ length: RACERS }, (_, i) =>
      senders[i % senders.length](`/Patient?identifier=urn:x|${identifier}`, {
        method: 'PUT',
        body: patient(identifier, i),
      }),
    ),
  );
  const bodies = await Promise.all(responses.map((r) => r.json()));
  return {
    statuses: responses.map((r) => r.status).sort(),
    ids: new Set(bodies.map((b) => b.id as string)),
    versions: bodies.map((b) => b.meta.versionId as string).sort(),
  };
}

async function expectOnePatient(send: FhirSend, identifier: string, versions: number) {
  const found = await (await send(`/Patient?identifier=urn:x|${identifier}`)).json();
  expect(found.total).toBe(1);
  const history = await (await send(`/Patient/${found.entry[0].resource.id}/_history`)).json();
  expect(history.total).toBe(versions);
}

describe.each(engines)('conditional updates racing on one server, %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  it('create one Patient and update it, however many race', async () => {
    const { statuses, ids, versions } = await race([server.fhir], 'one-server');
    expect(statuses).toEqual([200, 200, 200, 200, 200, 201]);
    expect(ids.size).toBe(1);
    expect(versions).toEqual(['1', '2', '3', '4', '5', '6']);
    await expectOnePatient(server.fhir, 'one-server', RACERS);
  });

  it('make one Patient of conditional creates and updates of one condition racing', async () => {
    const identifier = 'mixed';
    const responses = await Promise.all(
      Array.from({ length: RACERS }, (_, i) =>
        i % 2 === 0
          ? server.fhir(`/Patient?identifier=urn:x|${identifier}`, {
              method: 'PUT',
              body: patient(identifier, i),
            })
          : server.fhir('/Patient', {
              method: 'POST',
              body: patient(identifier, i),
              headers: { 'If-None-Exist': `identifier=urn:x|${identifier}` },
            }),
      ),
    );
    expect(responses.map((r) => r.status).filter((s) => s === 201)).toHaveLength(1);
    const ids = new Set(await Promise.all(responses.map(async (r) => (await r.json()).id)));
    expect(ids.size).toBe(1);
    // A version for each update, and one more when a create made the Patient.
    const createdByPost = responses.some((r, i) => i % 2 === 1 && r.status === 201);
    await expectOnePatient(server.fhir, identifier, RACERS / 2 + (createdByPost ? 1 : 0));
  });
});

describe.runIf(engines.includes('postgres'))('conditional updates racing on two servers', () => {
  const servers = serversSharingOneDatabase();

  it('create one Patient and update it, from either server', async () => {
    for (const round of ['a', 'b', 'c']) {
      const { statuses, ids, versions } = await race(
        [servers.first.fhir, servers.second.fhir],
        `two-servers-${round}`,
      );
      expect(statuses).toEqual([200, 200, 200, 200, 200, 201]);
      expect(ids.size).toBe(1);
      expect(versions).toEqual(['1', '2', '3', '4', '5', '6']);
      await expectOnePatient(servers.second.fhir, `two-servers-${round}`, RACERS);
    }
  });
});

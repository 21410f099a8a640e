/**
 * Conditional creates that race: however many `POST Patient` with the same `If-None-Exist` run at
 * once — on one server, or split over two servers on one PostgreSQL database — exactly one
 * creates the Patient (201) and every other answers with it (200), and one Patient exists after.
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

/** RACERS conditional creates of one identifier, sent round-robin over `senders`, at once. */
async function race(senders: readonly FhirSend[], identifier: string) {
  const responses = await Promise.all(
    Array.from({ length: RACERS }, (_, i) =>
      senders[i % senders.length]('/Patient', {
        method: 'POST',
        body: { resourceType: 'Patient', identifier: [{ system: 'urn:cc', value: identifier }] },
        headers: { 'If-None-Exist': `identifier=urn:cc|${identifier}` },
      }),
    ),
  );
  const ids = await Promise.all(responses.map(async (r) => (await r.json()).id as string));
  return { statuses: responses.map((r) => r.status).sort(), ids: new Set(ids) };
}

describe.each(engines)('conditional creates racing on one server, %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  it('create one Patient, however many race', async () => {
    const { statuses, ids } = await race([server.fhir], 'one-server');
    expect(statuses).toEqual([200, 200, 200, 200, 200, 201]);
    expect(ids.size).toBe(1);
    const found = await (await server.fhir('/Patient?identifier=urn:cc|one-server')).json();
    expect(found.total).toBe(1);
  });
});

describe.runIf(engines.includes('postgres'))('conditional creates racing on two servers', () => {
  const servers = serversSharingOneDatabase();

  it('create one Patient, and every later one finds it', async () => {
    for (const round of ['a', 'b', 'c']) {
      const { statuses, ids } = await race(
        [servers.first.fhir, servers.second.fhir],
        `two-servers-${round}`,
      );
      expect(statuses).toEqual([200, 200, 200, 200, 200, 201]);
      expect(ids.size).toBe(1);
    }
    const later = await servers.first.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient' },
      headers: { 'If-None-Exist': 'identifier=urn:cc|two-servers-a' },
    });
    expect(later.status).toBe(200);
  });
});

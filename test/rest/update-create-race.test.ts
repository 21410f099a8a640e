/**
 * PUTs that race to create one new id (update as create): one creates it (201); each other one
 * either updates what it found (200, a later version) or, when it was writing the same first
 * version at the same moment, is refused with 409 — never a 500 — and the history holds each
 * version once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const engines = await availableEngines();
const RACERS = 6;
const ROUNDS = 5;

describe.each(engines)('PUTs racing to create one id, %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  it('create it once and refuse a clash with 409', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const id = `race-${round}`;
      const responses = await Promise.all(
        Array.from({ length: RACERS }, (_, i) =>
          server.fhir(`/Patient/${id}`, {
            method: 'PUT',
            body: { resourceType: 'Patient', id, name: [{ family: `Racer ${i}` }] },
          }),
        ),
      );
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 201)).toHaveLength(1);
      for (const status of statuses) expect([200, 201, 409]).toContain(status);
      const refused = responses.filter((response) => response.status === 409);
      for (const response of refused) {
        expect((await response.json()).resourceType).toBe('OperationOutcome');
      }
      const stored = statuses.filter((status) => status !== 409).length;
      const history = await (await server.fhir(`/Patient/${id}/_history`)).json();
      const versions = history.entry.map((entry: any) => entry.resource.meta.versionId).sort();
      expect(versions).toEqual(Array.from({ length: stored }, (_, v) => String(v + 1)));
    }
  });
});

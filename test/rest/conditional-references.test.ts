/**
 * A transaction entry created with If-None-Exist, referenced by other entries through its
 * `urn:uuid:` fullUrl: the references must name the resource that entry ends up as — the one it
 * created, or the existing one it matched (http://hl7.org/fhir/R4/http.html#trules).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe.each(await availableEngines())(
  'references to conditional creates in a transaction on %s',
  (engine) => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer(engine);
    });
    afterAll(() => server?.stop());

    const send = async (mrn: string) => {
      const patient = `urn:uuid:${randomUUID()}`;
      const response = await server.fhir('/', {
        method: 'POST',
        body: {
          resourceType: 'Bundle',
          type: 'transaction',
          entry: [
            {
              resource: {
                resourceType: 'Observation',
                status: 'final',
                code: { text: 'weight' },
                subject: { reference: patient },
              },
              request: { method: 'POST', url: 'Observation' },
            },
            {
              fullUrl: patient,
              resource: {
                resourceType: 'Patient',
                identifier: [{ system: 'urn:mrn', value: mrn }],
              },
              request: { method: 'POST', url: 'Patient', ifNoneExist: `identifier=urn:mrn|${mrn}` },
            },
          ],
        },
      });
      expect(response.status).toBe(200);
      const [observation, created] = (await response.json()).entry;
      const patientId = created.response.location.split('/')[1];
      const stored = await (
        await server.fhir(`/${observation.response.location.split('/_history')[0]}`)
      ).json();
      return { patientId, status: created.response.status, subject: stored.subject.reference };
    };

    it('names the resource the entry created', async () => {
      const { patientId, status, subject } = await send(randomUUID());
      expect(status).toMatch(/^201/);
      expect(subject).toBe(`Patient/${patientId}`);
      expect((await server.fhir(`/${subject}`)).status).toBe(200);
    });

    it('names the existing resource the entry matched', async () => {
      const mrn = randomUUID();
      const first = await send(mrn);
      const second = await send(mrn);
      expect(second.status).toMatch(/^200/);
      expect(second.patientId).toBe(first.patientId);
      expect(second.subject).toBe(`Patient/${first.patientId}`);
    });
  },
);

/**
 * What Medplum's client sends for the writes of this part, answered as it expects: its
 * `patchResource` (PATCH with `application/json-patch+json`) and `upsertResource` (`PUT
 * Type?search`). Logging in is another test's business: the client is handed a token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MedplumClient } from '@medplum/core';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

// @medplum/core needs a WebSocket class when it loads; Node 20 has none. Nothing here uses it.
(globalThis as { WebSocket?: unknown }).WebSocket ??= class {};
const { MedplumClient: Client } = await import('@medplum/core');

const patientWith = (mrn: string, extra: object = {}) => ({
  resourceType: 'Patient' as const,
  identifier: [{ system: 'urn:medplum', value: mrn }],
  ...extra,
});

describe.each(await availableEngines())("Medplum's client writing on %s", (engine) => {
  let server: TestServer;
  let medplum: MedplumClient;
  beforeAll(async () => {
    server = await startTestServer(engine);
    medplum = new Client({
      baseUrl: `${server.url}/`,
      fhirUrlPath: 'fhir/R4',
      fetch,
    });
    medplum.setAccessToken(server.project.token);
  });
  afterAll(() => server?.stop());

  it('upserts: creates, then updates the one match', async () => {
    const created = await medplum.upsertResource(patientWith('upsert-1', { active: false }), {
      identifier: 'urn:medplum|upsert-1',
    });
    expect(created).toMatchObject({ active: false, meta: { versionId: '1' } });
    const updated = await medplum.upsertResource(
      patientWith('upsert-1', { active: true }),
      'identifier=urn:medplum|upsert-1',
    );
    expect(updated).toMatchObject({ id: created.id, active: true, meta: { versionId: '2' } });
  });

  it('refuses an upsert whose search matches several', async () => {
    await medplum.createResource(patientWith('twin'));
    await medplum.createResource(patientWith('twin'));
    await expect(
      medplum.upsertResource(patientWith('twin'), { identifier: 'urn:medplum|twin' }),
    ).rejects.toThrow(/matches more than one Patient/);
  });

  it('patches', async () => {
    const { id } = await medplum.createResource(patientWith('patched', { active: false }));
    const patched = await medplum.patchResource('Patient', id!, [
      { op: 'test', path: '/active', value: false },
      { op: 'replace', path: '/active', value: true },
      { op: 'add', path: '/name', value: [{ family: 'Patched' }] },
    ]);
    expect(patched).toMatchObject({ id, active: true, name: [{ family: 'Patched' }] });
    expect(await (await server.fhir(`/Patient/${id}`)).json()).toMatchObject({
      active: true,
      meta: { versionId: '2' },
    });
    await expect(
      medplum.patchResource('Patient', id!, [{ op: 'test', path: '/active', value: false }]),
    ).rejects.toThrow(/the value is true, not false/);
  });
});

/**
 * `DELETE [base]/[type]?[search]`, single mode: one match is deleted, none deletes nothing and
 * succeeds, several are a 412; a search that is not a valid one, or has no criteria, is refused
 * and never taken to match everything. The CapabilityStatement says what the server does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { storedVersions } from '../support/stored-versions.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const withMrn = (mrn: string) => ({
  resourceType: 'Patient',
  identifier: [{ system: 'urn:test:mrn', value: mrn }],
});

describe.each(await availableEngines())('conditional delete on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  const create = async (mrn: string): Promise<string> =>
    (await (await server.fhir('/Patient', { method: 'POST', body: withMrn(mrn) })).json()).id;
  const remove = (query: string, token?: string) =>
    server.fhir(`/Patient?${query}`, { method: 'DELETE', ...(token ? { token } : {}) });

  it('deletes the one match', async () => {
    const id = await create('d-1');
    const kept = await create('d-1-other');
    const response = await remove('identifier=urn:test:mrn|d-1');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      resourceType: 'OperationOutcome',
      issue: [{ severity: 'information', diagnostics: `Deleted Patient/${id}` }],
    });
    expect((await server.fhir(`/Patient/${id}`)).status).toBe(410);
    expect((await server.fhir(`/Patient/${kept}`)).status).toBe(200);
  });

  it('deletes nothing and succeeds when nothing matches', async () => {
    await create('d-2');
    const before = await storedVersions(server);
    const response = await remove('identifier=urn:test:mrn|nobody');
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      resourceType: 'OperationOutcome',
      issue: [
        {
          severity: 'information',
          diagnostics: 'No Patient matched identifier=urn:test:mrn|nobody: nothing was deleted',
        },
      ],
    });
    expect(await storedVersions(server)).toBe(before);
  });

  it('needs the delete and the search scope', async () => {
    const id = await create('d-3');
    const { clientId, clientSecret } = server.project;
    const before = await storedVersions(server);
    for (const scope of ['system/Patient.rs', 'system/Patient.cud']) {
      const token = await server.token(clientId, clientSecret, scope);
      expect((await remove('identifier=urn:test:mrn|d-3', token)).status).toBe(403);
    }
    expect(await storedVersions(server)).toBe(before);
    const token = await server.token(clientId, clientSecret, 'system/Patient.ds');
    expect((await remove('identifier=urn:test:mrn|d-3', token)).status).toBe(200);
    expect((await server.fhir(`/Patient/${id}`)).status).toBe(410);
  });

  const refusals: [string, string, number, string, RegExp][] = [
    [
      'several matches',
      'identifier=urn:test:mrn|twin',
      412,
      'duplicate',
      /Conditional delete: identifier=urn:test:mrn\|twin matches more than one Patient/,
    ],
    ['no search parameter', '', 400, 'invalid', /needs at least one search parameter/],
    ['only result parameters', '_count=5', 400, 'invalid', /needs at least one search parameter/],
    ['an unknown search parameter', 'mrn=twin', 400, 'invalid', /mrn is not a search parameter/],
    ['an unknown modifier', 'identifier:fuzzy=twin', 400, 'invalid', /fuzzy/],
    ['an invalid search value', 'birthdate=soon', 400, 'invalid', /birthdate/],
  ];
  it.each(refusals)(
    'refuses %s and deletes nothing',
    async (_name, query, status, code, message) => {
      await create('twin');
      await create('twin');
      const before = await storedVersions(server);
      const response = await remove(query);
      expect(response.status).toBe(status);
      const outcome = await response.json();
      expect(outcome).toMatchObject({ resourceType: 'OperationOutcome', issue: [{ code }] });
      expect(outcome.issue.map((i: { diagnostics: string }) => i.diagnostics).join('\n')).toMatch(
        message,
      );
      expect(await storedVersions(server)).toBe(before);
    },
  );
});

describe('the CapabilityStatement', () => {
  it('lists patch, conditional update and conditional delete in single mode', async () => {
    const server = await startTestServer('pglite');
    try {
      const statement = await (await server.fhir('/metadata', { token: null })).json();
      const patient = statement.rest[0].resource.find(
        (r: { type: string }) => r.type === 'Patient',
      );
      expect(patient.interaction.map((i: { code: string }) => i.code)).toContain('patch');
      expect(patient).toMatchObject({
        conditionalCreate: true,
        conditionalUpdate: true,
        conditionalDelete: 'single',
      });
    } finally {
      await server.stop();
    }
  });
});

/**
 * Project isolation through GraphQL, from both sides: two projects hold resources with the same
 * ids; reads, lists, references and reverse references only ever see their own project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Project } from '../support/test-server.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe('GraphQL keeps projects apart', () => {
  let server: TestServer;
  let projects: Record<'A' | 'B', Project>;

  beforeAll(async () => {
    server = await startTestServer('pglite');
    projects = { A: server.project, B: await server.createProject('B') };
    for (const name of ['A', 'B'] as const) {
      const entry = [
        { resourceType: 'Patient', id: 'same-1', gender: name === 'A' ? 'female' : 'male' },
        {
          resourceType: 'Observation',
          id: `obs-${name}`,
          status: 'final',
          code: { text: name },
          subject: { reference: 'Patient/same-1' },
        },
        {
          resourceType: 'Observation',
          id: 'points-elsewhere',
          status: 'final',
          code: { text: name },
          subject: { reference: `Patient/only-${name === 'A' ? 'B' : 'A'}` },
        },
        { resourceType: 'Patient', id: `only-${name}` },
      ].map((resource) => ({
        resource,
        request: { method: 'PUT', url: `${resource.resourceType}/${resource.id}` },
      }));
      const response = await server.fhir('/', {
        method: 'POST',
        body: { resourceType: 'Bundle', type: 'transaction', entry },
        token: projects[name].token,
      });
      expect(response.status).toBe(200);
    }
  });
  afterAll(() => server?.stop());

  const graphql = async (name: 'A' | 'B', query: string) =>
    (
      await server.fhir('/$graphql', {
        method: 'POST',
        body: JSON.stringify({ query }),
        headers: { 'Content-Type': 'application/json' },
        token: projects[name].token,
      })
    ).json();

  describe.each([
    ['A', 'B'],
    ['B', 'A'],
  ] as const)('project %s beside project %s', (me, other) => {
    it('reads its own resource under a shared id', async () => {
      const body = await graphql(me, '{ Patient(id: "same-1") { gender } }');
      expect(body.data.Patient.gender).toBe(me === 'A' ? 'female' : 'male');
    });

    it("never reads the other project's resource, and says not found", async () => {
      const body = await graphql(me, `{ Patient(id: "only-${other}") { id } }`);
      expect(body.data.Patient).toBeNull();
      expect(body.errors[0].extensions.resource.issue[0].code).toBe('not-found');
    });

    it('lists only its own resources', async () => {
      const body = await graphql(
        me,
        '{ PatientList(_count: 100) { id } ObservationList(_count: 100) { id } }',
      );
      expect(body.data.PatientList.map((p: { id: string }) => p.id).sort()).toEqual([
        `only-${me}`,
        'same-1',
      ]);
      expect(body.data.ObservationList.map((o: { id: string }) => o.id).sort()).toEqual([
        `obs-${me}`,
        'points-elsewhere',
      ]);
    });

    it('does not resolve a reference into the other project', async () => {
      const body = await graphql(
        me,
        '{ Observation(id: "points-elsewhere") { subject { reference resource { ... on Patient { id } } } } }',
      );
      expect(body.data.Observation.subject).toEqual({
        reference: `Patient/only-${other}`,
        resource: null,
      });
      expect(body.errors).toHaveLength(1);
    });

    it('follows reverse references within its project only', async () => {
      const body = await graphql(
        me,
        '{ Patient(id: "same-1") { ObservationList(_reference: subject) { id code { text } } } }',
      );
      expect(body.data.Patient.ObservationList).toEqual([{ id: `obs-${me}`, code: { text: me } }]);
    });
  });
});

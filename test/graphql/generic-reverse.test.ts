/**
 * Reverse references as FHIR writes them, where the schema has no typed field for them: through a
 * parameter that may point to any resource (`ProvenanceList(_reference: target)`), and a paged
 * reverse reference with search arguments (`DiagnosticReportConnection(_reference: subject,
 * status: final)`), which the typed field takes paging only for. Both run as the generic reverse
 * fields (runtime/model/generic-reverse-fields.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postGraphQL, putResource } from '../support/graphql-post.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

describe.each(['pglite', 'postgres'] as const)('generic reverse references on %s', (engine) => {
  let server: TestServer;
  const graphql = (query: string, variables?: Record<string, unknown>) =>
    postGraphQL(server, query, variables);
  const put = (resource: { resourceType: string; id: string } & Record<string, unknown>) =>
    putResource(server, resource);

  beforeAll(async () => {
    server = await startTestServer(engine);
    await put({ resourceType: 'Patient', id: 'gr-p' });
    await put({ resourceType: 'Observation', id: 'gr-o', status: 'final', code: { text: 'x' } });
    for (const [id, at] of [
      ['gr-prov1', '2024-01-01T00:00:00Z'],
      ['gr-prov2', '2024-02-01T00:00:00Z'],
    ])
      await put({
        resourceType: 'Provenance',
        id,
        target: [{ reference: 'Observation/gr-o' }],
        recorded: at,
        agent: [{ who: { reference: 'Patient/gr-p' } }],
      });
    for (const [id, status] of [
      ['gr-dr1', 'final'],
      ['gr-dr2', 'preliminary'],
    ])
      await put({
        resourceType: 'DiagnosticReport',
        id,
        status,
        code: { text: 'x' },
        subject: { reference: 'Patient/gr-p' },
      });
  });
  afterAll(() => server?.stop());

  it('has no typed field for a parameter that may point to any resource', async () => {
    // Provenance's `patient` points at Patients only: Patient has a typed ProvenanceList.
    const fieldsOf = async (type: string) =>
      (
        await graphql(`{ __type(name: "${type}") { fields { name } } }`)
      ).body.data.__type.fields.map((f: { name: string }) => f.name);
    expect(await fieldsOf('Patient')).toContain('ProvenanceList');
    const observation = await fieldsOf('Observation');
    expect(observation).not.toContain('ProvenanceList');
    expect(observation).toContain('_reverseList');
  });

  it('runs ProvenanceList(_reference: target) as FHIR writes it, with search arguments', async () => {
    const { status, body } = await graphql(`
      {
        Observation(id: "gr-o") {
          all: ProvenanceList(_reference: target, _sort: "_id") {
            id
            recorded
          }
          quoted: ProvenanceList(_reference: "target", _id: "gr-prov2") {
            id
          }
          since: ProvenanceList(
            _reference: target
            _lastUpdated: "ge2000"
            _count: 1
            _sort: "_id"
          ) {
            id
          }
        }
      }
    `);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toEqual({
      data: {
        Observation: {
          all: [
            { id: 'gr-prov1', recorded: '2024-01-01T00:00:00Z' },
            { id: 'gr-prov2', recorded: '2024-02-01T00:00:00Z' },
          ],
          quoted: [{ id: 'gr-prov2' }],
          since: [{ id: 'gr-prov1' }],
        },
      },
    });
  });

  it('runs the paged form, and a typed paged reverse reference given search arguments', async () => {
    const { status, body } = await graphql(
      `
        query ($status: String) {
          Observation(id: "gr-o") {
            ProvenanceConnection(_reference: target) {
              count
              edges {
                resource {
                  id
                }
              }
            }
          }
          Patient(id: "gr-p") {
            DiagnosticReportConnection(_reference: subject, status: $status) {
              count
              edges {
                resource {
                  id
                  status
                }
              }
            }
            DiagnosticReportList(_reference: subject, status: "preliminary") {
              id
            }
          }
        }
      `,
      { status: 'final' },
    );
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.data.Observation.ProvenanceConnection.count).toBe(2);
    expect(body.data.Observation.ProvenanceConnection.edges).toHaveLength(2);
    expect(body.data.Patient.DiagnosticReportConnection).toEqual({
      count: 1,
      edges: [{ resource: { id: 'gr-dr1', status: 'final' } }],
    });
    expect(body.data.Patient.DiagnosticReportList).toEqual([{ id: 'gr-dr2' }]);
  });

  it('answers an unknown search argument with an error naming it', async () => {
    const { body } = await graphql(
      '{ Observation(id: "gr-o") { ProvenanceList(_reference: target, colour: "red") { id } } }',
    );
    expect(body.data.Observation.ProvenanceList).toBeNull();
    expect(body.errors[0].message).toMatch(/colour/);
    expect(body.errors[0].path).toEqual(['Observation', 'ProvenanceList']);
  });

  it('refuses a reverse field of a type that does not exist', async () => {
    const { status, body } = await graphql(
      '{ Patient(id: "gr-p") { NothingList(_reference: target) { id } } }',
    );
    expect(status).toBe(400);
    expect(body.errors[0].message).toMatch(/Cannot query field "NothingList"/);
  });
});

/**
 * Reads by id from concurrent requests may share SQL statements (runtime/store/current-reads.ts;
 * test/runtime/current-reads.test.ts counts them): each request still gets its own project's
 * resource, 404 for what is not there and 410 for what was deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type Project, type TestServer } from '../support/test-server.js';

const IDS = Array.from({ length: 20 }, (_, i) => `shared-${i}`);

describe.each(await availableEngines())('reads of concurrent requests on %s', (engine) => {
  let server: TestServer;
  let other: Project;

  beforeAll(async () => {
    server = await startTestServer(engine);
    other = await server.createProject('Other');
    for (const [token, family] of [
      [server.project.token, 'Mine'],
      [other.token, 'Theirs'],
    ]) {
      for (const id of IDS) {
        const response = await server.fhir(`/Patient/${id}`, {
          method: 'PUT',
          token,
          body: { resourceType: 'Patient', id, name: [{ family }] },
        });
        expect(response.status).toBe(201);
      }
    }
    expect((await server.fhir(`/Patient/${IDS[0]}`, { method: 'DELETE' })).status).toBe(200);
  });
  afterAll(() => server?.stop());

  const readAll = async () => {
    const reads = IDS.flatMap((id) => [
      server
        .fhir(`/Patient/${id}`)
        .then(async (r) => ({ id, mine: true, r, body: await r.json() })),
      server
        .fhir(`/Patient/${id}`, { token: other.token })
        .then(async (r) => ({ id, mine: false, r, body: await r.json() })),
    ]);
    const unknown = server.fhir('/Patient/never-there');
    return { answers: await Promise.all(reads), unknown: await unknown };
  };

  it('are each answered from their own project', async () => {
    const { answers, unknown } = await readAll();
    for (const { id, mine, r, body } of answers) {
      if (mine && id === IDS[0]) {
        expect(r.status).toBe(410);
        expect(body.resourceType).toBe('OperationOutcome');
        continue;
      }
      expect(r.status).toBe(200);
      expect(body.id).toBe(id);
      expect(body.name[0].family).toBe(mine ? 'Mine' : 'Theirs');
    }
    expect(unknown.status).toBe(404);
  });

  it('are each answered from their own project in GraphQL too', async () => {
    const query = (id: string, token: string) =>
      server
        .fhir('/$graphql', {
          method: 'POST',
          token,
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            query: 'query ($id: ID!) { Patient(id: $id) { id name { family } } }',
            variables: { id },
          }),
        })
        .then((r) => r.json());
    const answers = await Promise.all(
      IDS.slice(1).flatMap((id) => [
        query(id, server.project.token).then((body) => ({ id, family: 'Mine', body })),
        query(id, other.token).then((body) => ({ id, family: 'Theirs', body })),
      ]),
    );
    for (const { id, family, body } of answers) {
      expect(body.errors).toBeUndefined();
      expect(body.data.Patient).toEqual({ id, name: [{ family }] });
    }
  });
});

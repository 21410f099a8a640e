/**
 * No N+1: a query over many Patients with their DiagnosticReports, the reports' resolved
 * Observations and the Patients' Encounters costs the same number of SQL statements for 10
 * Patients as for 50.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { patientEntries } from '../../bench/synthetic-dataset.js';
import { countingDatabase } from '../support/counting-database.js';
import { availableEngines, createTestDatabase } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const QUERY = `query ($count: Int) {
  PatientList(_count: $count, _sort: "_id") {
    id
    DiagnosticReportList(_reference: subject) { id result { resource { ... on Observation { id valueQuantity { value } } } } }
    EncounterList(_reference: patient) { id status }
  }
}`;

describe.each(await availableEngines())('SQL statements per GraphQL query on %s', (engine) => {
  let server: TestServer;
  let statements = 0;

  beforeAll(async () => {
    const database = await createTestDatabase(engine);
    server = await startTestServer(
      engine,
      {},
      { ...database, db: countingDatabase(database.db, () => statements++) },
    );
    const entry = Array.from({ length: 50 }, (_, i) => patientEntries(i)).flat();
    const loaded = await server.fhir('/', {
      method: 'POST',
      body: { resourceType: 'Bundle', type: 'transaction', entry },
    });
    expect(loaded.status).toBe(200);
    // The planner statistics the load set off run a table at a time on PGlite, between
    // requests: their statements are not the query's.
    await server.settled();
  });
  afterAll(() => server?.stop());

  const query = async (text: string, variables: Record<string, unknown>) => {
    statements = 0;
    const response = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({ query: text, variables }),
      headers: { 'Content-Type': 'application/json' },
    });
    const body = await response.json();
    expect(body.errors).toBeUndefined();
    return { statements, data: body.data };
  };
  const run = async (count: number) => {
    const { statements, data } = await query(QUERY, { count });
    return { statements, patients: data.PatientList };
  };

  it('is a small constant, independent of the number of Patients', async () => {
    const ten = await run(10);
    const fifty = await run(50);
    expect(ten.patients).toHaveLength(10);
    expect(fifty.patients).toHaveLength(50);
    for (const patient of fifty.patients) {
      expect(patient.DiagnosticReportList).toHaveLength(2);
      expect(patient.EncounterList).toHaveLength(3);
      expect(
        patient.DiagnosticReportList[0].result.map(
          (r: { resource: { id: string } }) => r.resource.id,
        ),
      ).toHaveLength(3);
    }
    expect(fifty.statements).toBe(ten.statements);
    expect(fifty.statements).toBeLessThanOrEqual(10);
    console.log(
      `SQL statements for 10 and for 50 Patients with reports, observations and encounters: ${ten.statements}, ${fifty.statements}`,
    );
  });

  it('costs one statement per level and list for one Patient (bench query Q5)', async () => {
    const [{ id }] = (await run(1)).patients;
    const { statements, data } = await query(
      `query ($id: ID!) { Patient(id: $id) { id
        DiagnosticReportList(_reference: subject) { id result { resource { ... on Observation { id } } } }
        EncounterList(_reference: patient) { id } } }`,
      { id },
    );
    expect(data.Patient.DiagnosticReportList).toHaveLength(2);
    expect(data.Patient.EncounterList).toHaveLength(3);
    // The Patient; its reports and its encounters; the reports' observations: 4, and one more
    // when the token's client is looked up again (every 5 s).
    expect(statements).toBeLessThanOrEqual(5);
  });
});

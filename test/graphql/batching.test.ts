/**
 * No N+1: a query over many Patients with their DiagnosticReports, the reports' resolved
 * Observations and the Patients' Encounters costs the same number of SQL statements for 10
 * Patients as for 50.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { patientEntries } from '../../bench/synthetic-dataset.js';
import type { Database, Queryable } from '../../runtime/store/database.js';
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
      { ...database, db: counting(database.db, () => statements++) },
    );
    const entry = Array.from({ length: 50 }, (_, i) => patientEntries(i)).flat();
    const loaded = await server.fhir('/', {
      method: 'POST',
      body: { resourceType: 'Bundle', type: 'transaction', entry },
    });
    expect(loaded.status).toBe(200);
  });
  afterAll(() => server?.stop());

  const run = async (count: number) => {
    statements = 0;
    const response = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({ query: QUERY, variables: { count } }),
      headers: { 'Content-Type': 'application/json' },
    });
    const body = await response.json();
    expect(body.errors).toBeUndefined();
    return { statements, patients: body.data.PatientList };
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
});

/** The same database, counting every statement the server sends (the client-credentials ones too). */
function counting(db: Database, count: () => void): Database {
  const wrap = (q: Queryable): Queryable => ({
    query: (text, values) => (count(), q.query(text, values)),
  });
  return {
    ...db,
    ...wrap(db),
    transaction: (work) => db.transaction((tx) => work(wrap(tx))),
    exec: db.exec,
    close: db.close,
  };
}

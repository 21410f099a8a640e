/**
 * Reading ahead beneath a read by id (runtime/graphql/reference-lookahead.ts): the targets of
 * the references the query resolves, and its reverse reference lists, start beside the read.
 * On PostgreSQL that saves round trips; on both engines the answers, errors and access checks
 * are those without it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopedClient } from '../access/helpers.js';
import { compiledExecutions } from '../support/compiled-executions.js';
import type { Database, Queryable } from '../../runtime/store/database.js';
import { availableEngines, createTestDatabase } from '../support/test-databases.js';
import { startTestServer, type Project, type TestServer } from '../support/test-server.js';

/** The statement that reads current rows by id (store/current-reads.ts). */
const READ_BY_ID = /FROM resource r\s+WHERE r\.project_id = \$1 AND \(r\.resource_type/;
/** A reverse reference list's search over the reference index. */
const REVERSE_SEARCH = /FROM search_reference i WHERE .*i\.target_id/s;
const REPORT_QUERY = `query ($id: SearchValue!) { DiagnosticReport(id: $id) { id
  result { reference resource(optional: true) { ... on Observation { id valueQuantity { value } } } } } }`;

/** Each statement's text when it is sent, and `done: <text>` when its answer has come. */
function loggingDatabase(db: Database, log: (entry: string) => void): Database {
  const wrap = (q: Queryable): Queryable => ({
    query: async (text, values, options) => {
      log(text);
      try {
        return await q.query(text, values, options);
      } finally {
        log(`done: ${text}`);
      }
    },
  });
  return {
    ...db,
    ...wrap(db),
    transaction: (work) => db.transaction((tx) => work({ ...wrap(tx), afterEnd: tx.afterEnd })),
  };
}

describe.each(await availableEngines())('reading ahead on %s', (engine) => {
  let server: TestServer;
  let other: Project;
  let log: string[] = [];

  beforeAll(async () => {
    const database = await createTestDatabase(engine);
    server = await startTestServer(
      engine,
      {},
      { ...database, db: loggingDatabase(database.db, (entry) => log.push(entry)) },
    );
    other = await server.createProject('Other');
    const observation = (id: string, value: number) => ({
      resourceType: 'Observation',
      id,
      status: 'final',
      code: { text: 'weight' },
      subject: { reference: 'Patient/p1' },
      valueQuantity: { value },
    });
    const report = (id: string, results: string[], subject?: string) => ({
      resourceType: 'DiagnosticReport',
      id,
      status: 'final',
      code: { text: 'panel' },
      ...(subject ? { subject: { reference: subject } } : {}),
      result: results.map((result) => ({ reference: `Observation/${result}` })),
    });
    const put = (resource: { resourceType: string; id: string; [element: string]: unknown }) => ({
      request: { method: 'PUT', url: `${resource.resourceType}/${resource.id}` },
      resource,
    });
    const loaded = await server.fhir('', {
      method: 'POST',
      body: {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          put({ resourceType: 'Patient', id: 'p1' }),
          put(observation('o1', 1)),
          put(observation('o2', 2)),
          put(observation('gone', 3)),
          // Its last reference: only the other project has that Observation.
          put(report('r1', ['o1', 'o2', 'gone', 'elsewhere'], 'Patient/p1')),
          put(report('r2', ['o1', 'o2'])),
          put({
            resourceType: 'Encounter',
            id: 'e1',
            status: 'finished',
            class: { code: 'AMB' },
            subject: { reference: 'Patient/p1' },
          }),
        ],
      },
    });
    expect(loaded.status).toBe(200);
    expect((await server.fhir('/Observation/gone', { method: 'DELETE' })).status).toBeLessThan(300);
    const elsewhere = await server.fhir('/Observation/elsewhere', {
      method: 'PUT',
      body: observation('elsewhere', 4),
      token: other.token,
    });
    expect(elsewhere.status).toBe(201);
    await server.settled();
  });
  afterAll(() => server?.stop());

  const query = async (text: string, variables: Record<string, unknown>, token?: string) => {
    log = [];
    const response = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({ query: text, variables }),
      headers: { 'Content-Type': 'application/json' },
      ...(token ? { token } : {}),
    });
    const body = await response.json();
    return {
      status: response.status,
      body,
      statements: log.filter((e) => !e.startsWith('done: ')),
      log,
    };
  };

  it('resolves references read ahead as it resolves them one by one', async () => {
    const { status, body } = await query(REPORT_QUERY, { id: 'r1' });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.DiagnosticReport.result).toEqual([
      { reference: 'Observation/o1', resource: { id: 'o1', valueQuantity: { value: 1 } } },
      { reference: 'Observation/o2', resource: { id: 'o2', valueQuantity: { value: 2 } } },
      // Deleted, and another project's: not resolved, as without reading ahead.
      { reference: 'Observation/gone', resource: null },
      { reference: 'Observation/elsewhere', resource: null },
    ]);
  });

  it('reads the targets beside the resource on PostgreSQL, not after it', async () => {
    const { body, statements: sent } = await query(REPORT_QUERY, { id: 'r2' });
    expect(body.errors).toBeUndefined();
    expect(body.data.DiagnosticReport.result.map((r: any) => r.resource.id)).toEqual(['o1', 'o2']);
    const readsById = sent.filter((text) => READ_BY_ID.test(text));
    const readAhead = sent.filter((text) =>
      /CROSS JOIN LATERAL \(\s*SELECT DISTINCT i\.resource_type AS source_type/.test(text),
    );
    if (engine === 'postgres') {
      // The report's read, and beside it its references' targets: no read of the Observations
      // by id once the report has come.
      expect(readsById).toHaveLength(1);
      expect(readAhead).toHaveLength(1);
    } else {
      // PGlite's reads come from memory: nothing to save.
      expect(readAhead).toHaveLength(0);
    }
  });

  it('checks access to the targets as resolving does', async () => {
    const { token } = await scopedClient(
      server,
      server.project.projectId,
      server.project.token,
      'system/DiagnosticReport.read',
    );
    const { status, body } = await query(
      `query ($id: SearchValue!) { DiagnosticReport(id: $id) { id result { resource { ... on Observation { id } } } } }`,
      { id: 'r1' },
      token,
    );
    expect(status).toBe(200);
    expect(body.data.DiagnosticReport.result[0].resource).toBeNull();
    expect(body.errors.length).toBeGreaterThan(0);
    expect(JSON.stringify(body.errors)).toMatch(/Observation/);
  });

  it('runs each reverse reference list once, started beside the read, compiled or not', async () => {
    // From its second run on the text runs compiled (compiled-execution.ts): it selects no
    // `resource`.
    const compiledBefore = await compiledExecutions(server.url);
    for (let run = 0; run < 3; run++) {
      const {
        body,
        statements: sent,
        log: order,
      } = await query(
        `query ($id: SearchValue!) { Patient(id: $id) { id
        DiagnosticReportList(_reference: subject) { id }
        reports: DiagnosticReportConnection(_reference: subject) { count }
        EncounterList(_reference: subject, status: "finished") { id } } }`,
        { id: 'p1' },
      );
      expect(body.errors).toBeUndefined();
      expect(body.data.Patient).toEqual({
        id: 'p1',
        DiagnosticReportList: [{ id: 'r1' }],
        reports: { count: 1 },
        EncounterList: [{ id: 'e1' }],
      });
      // The list and the connection of reports share one search; the encounters have their own.
      expect(sent.filter((text) => REVERSE_SEARCH.test(text))).toHaveLength(2);
      if (engine === 'postgres') {
        // Both were sent before the Patient's read had come back (PGlite reads it from memory).
        const patientRead = order.findIndex((e) => e.startsWith('done: ') && READ_BY_ID.test(e));
        const searches = order.flatMap((e, i) =>
          REVERSE_SEARCH.test(e) && !e.startsWith('done: ') ? [i] : [],
        );
        expect(patientRead).toBeGreaterThan(-1);
        expect(searches.every((i) => i < patientRead)).toBe(true);
      }
    }
    expect(await compiledExecutions(server.url)).toBeGreaterThan(compiledBefore);
  });

  it('reports bad reverse reference lists and refused ones as without reading ahead', async () => {
    const bad = await query(
      `query ($id: SearchValue!) { Patient(id: $id) { id DiagnosticReportList(_reference: subject, date: "soon") { id } } }`,
      { id: 'p1' },
    );
    expect(bad.body.data.Patient.DiagnosticReportList).toBeNull();
    expect(JSON.stringify(bad.body.errors)).toMatch(/soon/);
    const { token } = await scopedClient(
      server,
      server.project.projectId,
      server.project.token,
      'system/Patient.read',
    );
    const refused = await query(
      `query ($id: SearchValue!) { Patient(id: $id) { id DiagnosticReportList(_reference: subject) { id } } }`,
      { id: 'p1' },
      token,
    );
    expect(refused.body.data.Patient.DiagnosticReportList).toBeNull();
    expect(JSON.stringify(refused.body.errors)).toMatch(/DiagnosticReport/);
  });

  it('reads nothing ahead for another project, nor for a report that is not there', async () => {
    const { body } = await query(REPORT_QUERY, { id: 'r1' }, other.token);
    expect(body.data.DiagnosticReport).toBeNull();
    expect(body.errors[0].extensions.resource.issue[0].code).toBe('not-found');
    const missing = await query(REPORT_QUERY, { id: 'nothing' });
    expect(missing.body.errors[0].extensions.resource.issue[0].code).toBe('not-found');
  });
});

/**
 * npm run bench:statements — what one search statement costs the server's process, without
 * HTTP: the synthetic data set (1,000 patients) loaded through a server in this process, then the
 * SQL of a read by id (bench Q1), bench Q2 (a name search, 20 of 61 matches) and Q8 (100
 * Patients) run directly, on PGlite (on disk) and PostgreSQL:
 * - unprepared, with the contents (as PGlite's `query()` and pg run any text), and prepared;
 * - prepared, with the contents;
 * - prepared, types, ids and versions only (what searches select; the contents then come from
 *   runtime/store/version-contents.ts);
 * and JSON.parse of Q8's 100 contents alone. Prints the median of 600 runs after 200.
 */
import { loadSearchDefinition } from '../generated/search/index.js';
import { parseCriterion } from '../runtime/search/parse-search-arguments.js';
import type { Database } from '../runtime/store/database.js';
import { currentRowsQuery } from '../runtime/store/current-reads.js';
import { buildSearchQuery, type SqlQuery } from '../runtime/store/search-sql.js';
import { availableEngines } from '../test/support/test-databases.js';
import { startTestServer } from '../test/support/test-server.js';
import { openBenchDatabase } from './bench-database.js';
import { percentile } from './measure.js';
import { transactionBundles } from './synthetic-dataset.js';

const RUNS = 600;
const WARMUP = 200;

for (const engine of await availableEngines()) {
  const database = await openBenchDatabase(engine);
  const server = await startTestServer(engine, {}, database);
  try {
    for (const bundle of transactionBundles(1000, 500)) {
      const response = await server.fhir('/', { method: 'POST', body: bundle });
      if (response.status !== 200) throw new Error(`load failed: ${response.status}`);
    }
    await server.settled();
    await database.db.exec('ANALYZE');
    const { projectId } = server.project;
    const patients = loadSearchDefinition('Patient');
    const name = parseCriterion(patients, 'name', undefined, 'garc', 'name');
    const queries: Record<string, SqlQuery> = {
      Q2: buildSearchQuery(projectId, patients, [name], { count: 20, offset: 0, sort: [] }),
      Q8: buildSearchQuery(projectId, patients, [], { count: 100, offset: 0, sort: [] }),
    };
    const [patient] = (
      await database.db.query<{ id: string }>(
        "SELECT id FROM resource WHERE resource_type = 'Patient' LIMIT 1",
      )
    ).rows;
    const read = currentRowsQuery(projectId, [{ resourceType: 'Patient', id: patient.id }]);
    await report(engine, 'read by id, unprepared', database.db, read);
    await report(engine, 'read by id, prepared', database.db, read, true);
    for (const [label, query] of Object.entries(queries)) {
      const withContents = { ...query, text: withContentsOf(query.text) };
      await report(engine, `${label} unprepared, with contents`, database.db, withContents);
      await report(engine, `${label} prepared, with contents`, database.db, withContents, true);
      await report(engine, `${label} prepared, versions only`, database.db, query, true);
    }
    const contents = JSON.stringify(
      (
        await database.db.query<{ content: unknown }>(
          withContentsOf(queries.Q8.text),
          queries.Q8.values,
        )
      ).rows.map((row) => row.content),
    );
    await time(`${engine}  JSON.parse of Q8's 100 contents (${contents.length} characters)`, () =>
      Promise.resolve(JSON.parse(contents)),
    );
  } finally {
    await server.close();
    await database.drop();
  }
}

/** The search's rows with their resources' contents, as a search selected them before version-contents.ts. */
function withContentsOf(search: string): string {
  return `SELECT r.content FROM (${search}) s JOIN resource r ON r.project_id = $1::text AND r.resource_type = s.resource_type AND r.id = s.id`;
}

async function report(
  engine: string,
  label: string,
  db: Database,
  query: SqlQuery,
  prepared = false,
): Promise<void> {
  await time(`${engine}  ${label}`, () =>
    db.query(query.text, query.values, prepared ? { prepared: 'fixed' } : undefined),
  );
}

async function time(label: string, run: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < WARMUP; i++) await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  console.log(`${label}: p50 ${percentile(times, 50).toFixed(2)} ms`);
}

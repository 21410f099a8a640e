/**
 * The schema stays distributable by project (docs/scale-out.md: Citus, one shard key,
 * `project_id`). Read from a migrated PostgreSQL database's catalog: every table of Graphir's is
 * named below as distributed by a column, a reference table or a coordinator table; every primary
 * key and unique index of a distributed table leads with its distribution column (a shard can
 * only enforce uniqueness of rows it holds), and so does every other index (a project's rows are
 * found on its shard); foreign keys never point from a reference table to a distributed one. And
 * no statement reads across projects: every statement the server sent during a workload of
 * every kind of request is planned by PostgreSQL (EXPLAIN with the values it ran with), and each
 * scan of a distributed table must be limited to one project, the same one for the whole
 * statement — what Citus routes to a single shard.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Queryable } from '../../runtime/store/database.js';
import { createBot, executeLater, waitForTask } from '../jobs/async-helpers.js';
import { availableEngines, createTestDatabase } from '../support/test-databases.js';
import { startTestServer, type FhirResponse, type TestServer } from '../support/test-server.js';

const engines = await availableEngines();

/** Tables distributed by project: each with its distribution column. */
const DISTRIBUTED: Record<string, string> = {
  resource: 'project_id',
  resource_history: 'project_id',
  search_string: 'project_id',
  search_token: 'project_id',
  search_reference: 'project_id',
  search_date: 'project_id',
  search_number: 'project_id',
  search_quantity: 'project_id',
  search_uri: 'project_id',
  search_token_count: 'project_id',
  project_secret: 'project_id',
};
/** Copied whole to every node: small, and read by what knows no project yet (docs/scale-out.md). */
const REFERENCE = ['project', 'client', 'signing_key'];
/** Kept on the coordinator alone: the server's own bookkeeping, never joined with a project's rows. */
const COORDINATOR = ['schema_migration', 'job', 'job_process'];

interface Statement {
  readonly text: string;
  readonly values: readonly unknown[];
}

/** The same database, keeping the first values each statement text was sent with. */
function recordingDatabase(db: Database, seen: Map<string, Statement>): Database {
  const wrap = (q: Queryable): Queryable => ({
    query: (text, values, options) => {
      if (!seen.has(text)) seen.set(text, { text, values: values ?? [] });
      return q.query(text, values, options);
    },
  });
  return {
    ...db,
    ...wrap(db),
    transaction: (work) => db.transaction((tx) => work({ ...wrap(tx), afterEnd: tx.afterEnd })),
    exec: db.exec,
    close: db.close,
  };
}

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly Operation?: string;
  readonly Plans?: PlanNode[];
  readonly [condition: string]: unknown;
}

const CONDITIONS = ['Index Cond', 'Recheck Cond', 'Filter'];

/** Each scan of a distributed table, with the text of every condition on it (and its index's). */
function distributedScans(node: PlanNode, out: { table: string; conditions: string }[] = []) {
  const table = node['Relation Name'];
  if (table && table in DISTRIBUTED && node['Node Type'] !== 'ModifyTable') {
    const own = CONDITIONS.map((key) => node[key]).filter(Boolean);
    // A bitmap heap scan's index conditions are on its bitmap index scans beneath.
    const beneath = (node.Plans ?? [])
      .filter((child) => child['Node Type'].startsWith('Bitmap'))
      .flatMap((child) => [
        child['Index Cond'],
        ...(child.Plans ?? []).map((c) => c['Index Cond']),
      ]);
    out.push({ table, conditions: [...own, ...beneath].filter(Boolean).join(' AND ') });
  }
  for (const child of node.Plans ?? []) distributedScans(child, out);
  return out;
}

/**
 * Why the statement, planned with its values, is not a single project's: a scan of a distributed
 * table with no `project_id = '…'` condition, or conditions naming two projects. `scanned` gets
 * the distributed tables it scans.
 */
async function readsAcrossProjects(
  direct: pg.Client,
  { text, values }: Statement,
  scanned = new Set<string>(),
): Promise<string[]> {
  const { rows } = await direct.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    `EXPLAIN (VERBOSE, FORMAT JSON) ${text}`,
    values as unknown[],
  );
  const problems: string[] = [];
  const projects = new Set<string>();
  for (const scan of distributedScans(rows[0]['QUERY PLAN'][0].Plan)) {
    scanned.add(scan.table);
    const project = conjuncts(scan.conditions)
      .map((part) => /^(?:\w+\.)?project_id = '([^']*)'::text(?: COLLATE "C")?$/.exec(part)?.[1])
      .find((value) => value !== undefined);
    if (project === undefined)
      problems.push(`${scan.table} not limited to a project (${scan.conditions}) in: ${text}`);
    else projects.add(project);
  }
  if (projects.size > 1) problems.push(`projects ${[...projects].join(', ')} in: ${text}`);
  return problems;
}

/**
 * The terms of a condition as EXPLAIN prints it that must all hold (`(a) AND ((b) AND (c))` →
 * a, b, c): a term inside an OR limits nothing.
 */
function conjuncts(condition: string): string[] {
  const text = withoutOuterParentheses(condition.trim());
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "'") quoted = !quoted;
    else if (quoted) continue;
    else if (char === '(') depth++;
    else if (char === ')') depth--;
    else if (depth === 0 && text.startsWith(' AND ', i)) {
      parts.push(text.slice(start, i));
      start = i + ' AND '.length;
    }
  }
  parts.push(text.slice(start));
  return parts.length === 1 ? parts : parts.flatMap(conjuncts);
}

function withoutOuterParentheses(text: string): string {
  while (text.startsWith('(') && closingParenthesis(text) === text.length - 1)
    text = text.slice(1, -1);
  return text;
}

function closingParenthesis(text: string): number {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "'") quoted = !quoted;
    else if (quoted) continue;
    else if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return i;
  }
  return -1;
}

describe.runIf(engines.includes('postgres'))('a schema distributable by project', () => {
  let server: TestServer;
  let direct: pg.Client;
  const statements = new Map<string, Statement>();

  beforeAll(async () => {
    const database = await createTestDatabase('postgres');
    server = await startTestServer(
      'postgres',
      {},
      {
        ...database,
        db: recordingDatabase(database.db, statements),
      },
    );
    direct = new pg.Client({ connectionString: database.url });
    await direct.connect();
  }, 60_000);
  afterAll(async () => {
    await direct?.end();
    await server?.stop();
  });

  const catalog = async <R>(sql: string) => (await direct.query(sql)).rows as R[];

  it('names every table of its own as distributed, reference or coordinator', async () => {
    const tables = await catalog<{ name: string }>(
      `SELECT relname AS name FROM pg_class
       WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') ORDER BY relname`,
    );
    expect(tables.map((t) => t.name).sort()).toEqual(
      [...Object.keys(DISTRIBUTED), ...REFERENCE, ...COORDINATOR].sort(),
    );
  });

  it('leads every index of a distributed table, unique or not, with its distribution column', async () => {
    const indexes = await catalog<{ table: string; index: string; first: string; unique: boolean }>(
      `SELECT t.relname AS table, i.relname AS index, a.attname AS first, x.indisunique AS unique
       FROM pg_index x
       JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_class i ON i.oid = x.indexrelid
       JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0]
       WHERE t.relnamespace = 'public'::regnamespace`,
    );
    const distributed = indexes.filter((index) => index.table in DISTRIBUTED);
    expect(distributed.filter((index) => index.unique).length).toBeGreaterThanOrEqual(3);
    const astray = distributed.filter((index) => index.first !== DISTRIBUTED[index.table]);
    expect(astray).toEqual([]);
  });

  it('has no foreign key from a reference table to a distributed one, nor between distributed ones', async () => {
    const keys = await catalog<{ from: string; to: string }>(
      `SELECT f.relname AS from, t.relname AS to FROM pg_constraint c
       JOIN pg_class f ON f.oid = c.conrelid JOIN pg_class t ON t.oid = c.confrelid
       WHERE c.contype = 'f' AND f.relnamespace = 'public'::regnamespace`,
    );
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(REFERENCE, `${key.from} → ${key.to}`).toContain(key.to);
  });

  it('tells a statement that reads across projects from one that does not', async () => {
    const check = (text: string, values: unknown[]) =>
      readsAcrossProjects(direct, { text, values });
    expect(
      await check(
        `SELECT r.id FROM resource r WHERE r.project_id = $1 AND EXISTS (
           SELECT 1 FROM search_token t WHERE t.project_id = r.project_id AND t.id = r.id)`,
        ['p1'],
      ),
    ).toEqual([]);
    // Joined on the id alone: the index rows of every project are read.
    expect(
      await check(
        `SELECT r.id FROM resource r WHERE r.project_id = $1 AND EXISTS (
           SELECT 1 FROM search_token t WHERE t.id = r.id)`,
        ['p1'],
      ),
    ).toEqual([expect.stringMatching(/^search_token not limited to a project/)]);
    expect(
      await check('SELECT id FROM resource WHERE project_id = $1 OR project_id = $2', ['p1', 'p2']),
    ).toEqual([expect.stringMatching(/^resource not limited to a project/)]);
    expect(
      await check(
        `SELECT id FROM resource WHERE project_id = $1
         UNION ALL SELECT id FROM resource_history WHERE project_id = $2`,
        ['p1', 'p2'],
      ),
    ).toEqual([expect.stringMatching(/^projects p1, p2 in/)]);
  });

  it('sends no statement that reads more than one project', { timeout: 120_000 }, async () => {
    await workload(server);
    const scanned = new Set<string>();
    const astray: string[] = [];
    let explained = 0;
    for (const statement of statements.values()) {
      if (!/^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b/i.test(statement.text)) continue;
      astray.push(...(await readsAcrossProjects(direct, statement, scanned)));
      explained++;
    }
    expect(astray).toEqual([]);
    // 61 distinct statements when this was written: reads, writes, searches of every kind.
    expect(explained).toBeGreaterThan(40);
    // The workload reached every distributed table: the check above saw them all.
    expect([...scanned].sort()).toEqual(Object.keys(DISTRIBUTED).sort());
  });
});

/** Requests of every kind the server answers, in one project and a second one. */
async function workload(server: TestServer): Promise<void> {
  const ok = async (response: Promise<FhirResponse>): Promise<any> => {
    const done = await response;
    if (done.status >= 400) throw new Error(`${done.url} → ${done.status}: ${await done.text()}`);
    return done.status === 204 ? undefined : done.json();
  };
  const other = await server.createProject('Other');
  for (const token of [server.project.token, other.token]) {
    const fhir = (path: string, init: Parameters<TestServer['fhir']>[1] = {}) =>
      server.fhir(path, { ...init, token });
    const patient = await ok(
      fhir('/Patient', {
        method: 'POST',
        body: {
          resourceType: 'Patient',
          name: [{ family: 'Shard', given: ['Ada'] }],
          gender: 'female',
          birthDate: '1970-01-01',
          identifier: [{ system: 'urn:mrn', value: '42' }],
        },
      }),
    );
    const subject = { reference: `Patient/${patient.id}` };
    const observation = await ok(
      fhir('/Observation', {
        method: 'POST',
        body: {
          resourceType: 'Observation',
          status: 'final',
          code: { coding: [{ system: 'http://loinc.org', code: '8867-4' }] },
          subject,
          valueQuantity: {
            value: 72,
            unit: '/min',
            system: 'http://unitsofmeasure.org',
            code: '/min',
          },
          effectiveDateTime: '2024-01-01T00:00:00Z',
        },
      }),
    );
    await ok(
      fhir('/DiagnosticReport', {
        method: 'POST',
        body: {
          resourceType: 'DiagnosticReport',
          status: 'final',
          code: { text: 'panel' },
          subject,
          result: [{ reference: `Observation/${observation.id}` }],
        },
      }),
    );
    await ok(
      fhir('/RiskAssessment', {
        method: 'POST',
        body: {
          resourceType: 'RiskAssessment',
          status: 'final',
          subject,
          prediction: [{ probabilityDecimal: 0.7 }],
        },
      }),
    );
    await ok(
      fhir('/ValueSet', {
        method: 'POST',
        body: { resourceType: 'ValueSet', status: 'active', url: 'http://example.org/vs' },
      }),
    );
    await ok(
      fhir(`/Patient/${patient.id}`, {
        method: 'PUT',
        body: {
          resourceType: 'Patient',
          id: patient.id,
          name: [{ family: 'Sharded' }],
          gender: 'female',
        },
      }),
    );
    await ok(
      fhir(`/Patient/${patient.id}`, {
        method: 'PATCH',
        body: [{ op: 'replace', path: '/gender', value: 'other' }],
        headers: { 'Content-Type': 'application/json-patch+json' },
      }),
    );
    await ok(
      fhir('/', {
        method: 'POST',
        body: {
          resourceType: 'Bundle',
          type: 'transaction',
          entry: [
            {
              fullUrl: 'urn:uuid:6b0b4e1c-0000-4000-8000-000000000001',
              resource: { resourceType: 'Patient', name: [{ family: 'Bundled' }] },
              request: { method: 'POST', url: 'Patient', ifNoneExist: 'identifier=urn:mrn|7' },
            },
            {
              resource: {
                resourceType: 'Encounter',
                status: 'finished',
                class: { code: 'AMB' },
                subject: { reference: 'urn:uuid:6b0b4e1c-0000-4000-8000-000000000001' },
              },
              request: { method: 'POST', url: 'Encounter' },
            },
          ],
        },
      }),
    );
    await ok(
      fhir('/Patient?identifier=urn:mrn|9', {
        method: 'PUT',
        body: { resourceType: 'Patient', identifier: [{ system: 'urn:mrn', value: '9' }] },
      }),
    );
    for (const query of [
      `Patient/${patient.id}`,
      `Patient/${patient.id}/_history`,
      `Patient/${patient.id}/_history/1`,
      'Patient?name=shard',
      'Patient?name:exact=Sharded&gender=other',
      'Patient?identifier=urn:mrn|42&_total=accurate',
      'Patient?birthdate=ge1960-01-01&_sort=-birthdate,name',
      `Patient?_id=${patient.id}&_lastUpdated=gt2000-01-01&_revinclude=Observation:subject`,
      'Patient?_summary=count',
      'Observation?code=http://loinc.org|8867-4&value-quantity=gt60&_include=Observation:subject',
      'Observation?date=2024&_sort=date&_count=1&_offset=1',
      `Observation?subject=Patient/${patient.id}&_elements=status`,
      `DiagnosticReport?result=Observation/${observation.id}&_include=DiagnosticReport:result`,
      'RiskAssessment?probability=gt0.5',
      'ValueSet?url=http://example.org/vs',
      'ValueSet?url:below=http://example.org',
      'Encounter?class=AMB&_total=accurate',
    ])
      for (let run = 0; run < 3; run++) await ok(fhir(`/${query}`));
    const graphql = (query: string) =>
      ok(
        fhir('/$graphql', {
          method: 'POST',
          body: { query },
          headers: { 'Content-Type': 'application/json' },
        }),
      );
    await graphql(
      `{ Patient(id: "${patient.id}") { id ObservationList(_reference: subject) { id } DiagnosticReportList(_reference: subject) { result { resource { ... on Observation { id } } } } } }`,
    );
    await graphql(
      '{ PatientList(name: "shard", _count: 5) { id } ObservationConnection(code: "8867-4") { count edges { resource { id } } } }',
    );
    await ok(fhir(`/Observation/${observation.id}`, { method: 'DELETE' }));
    await ok(fhir('/Encounter?class=AMB', { method: 'DELETE' }));
  }
  const root = await server.rootToken();
  const projectId = server.project.projectId;
  await ok(
    server.call(`/admin/projects/${projectId}/secrets/KEY`, {
      method: 'PUT',
      body: { value: 's' },
      token: root,
    }),
  );
  const client = await ok(
    server.call(`/admin/projects/${projectId}/clients`, {
      method: 'POST',
      body: { name: 'doomed', scope: 'system/*.rs' },
      token: root,
    }),
  );
  await server.token(client.clientId, client.clientSecret);
  await server.call(`/admin/projects/${projectId}/clients/${client.clientId}`, {
    method: 'DELETE',
    token: root,
  });
  const botId = await createBot(
    server,
    `export async function handler(fhir, event) {
      await fhir.createResource({ resourceType: 'Basic', code: { text: event.secrets.KEY.valueString } });
      return (await fhir.search('Basic', { code: 's' })).entry?.length ?? 0;
    }`,
    { identifier: [{ system: 'urn:bots', value: 'shard' }] },
  );
  await ok(server.fhir(`/Bot/${botId}/$execute`, { method: 'POST', body: {} }));
  await ok(server.fhir('/Bot/$execute?identifier=urn:bots|shard', { method: 'POST', body: {} }));
  await waitForTask(server, await executeLater(server, botId, {}));
  // What the server does in the background after enough writes.
  await server.store.tokenCounts.fold(projectId);
  await server.settled();
}

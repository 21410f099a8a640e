/**
 * Reads by id cost what they take: a root read, a mutation and a resolved reference each cost
 * 20 plus what they select, so that thousands of aliased reads are refused before they run,
 * while the benchmark queries and the HL7 conformance cases keep a wide margin under the limit.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUERIES } from '../../bench/graphql-query-set.js';
import { patientEntries } from '../../bench/synthetic-dataset.js';
import { measureQuery } from '../../runtime/graphql/query-limits.js';
import { storedVersions } from '../support/stored-versions.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const aliases = (n: number, field: string) =>
  `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(' ')} }`;

const graphql = async (server: TestServer, query: string, variables = {}) => {
  const response = await server.fhir('/$graphql', {
    method: 'POST',
    body: JSON.stringify({ query, variables }),
    headers: { 'Content-Type': 'application/json' },
  });
  return { status: response.status, body: await response.json() };
};

describe('the default cost limit', () => {
  let server: TestServer;
  beforeAll(async () => {
    // Texts as large as these queries are, so that the cost limit is what refuses them.
    server = await startTestServer('pglite', {
      GRAPHIR_GRAPHQL_MAX_QUERY_BYTES: String(4 * 1024 * 1024),
      GRAPHIR_GRAPHQL_MAX_TOKENS: '1000000',
    });
    const put = await server.fhir('/Observation/qc1', {
      method: 'PUT',
      body: {
        resourceType: 'Observation',
        id: 'qc1',
        status: 'final',
        code: { text: 'x' },
        subject: { reference: 'Patient/qcp' },
      },
    });
    expect(put.status).toBe(201);
  });
  afterAll(() => server?.stop());

  it.each([
    ['10,000 aliased root reads', aliases(10_000, 'Patient(id: qcp) { id }'), 210_000],
    [
      '4,600 aliased reference resolutions',
      `{ Observation(id: qc1) ${aliases(4_600, 'subject { resource { ... on Patient { id } } }')} }`,
      20 + 4_600 * 22,
    ],
    [
      '6,000 aliased mutations',
      `mutation ${aliases(6_000, 'PatientDelete(id: qcp) { id }')}`,
      126_000,
    ],
  ])(
    'refuses %s before running them, with 400',
    async (_name, query, cost) => {
      const before = await storedVersions(server);
      const { status, body } = await graphql(server, query);
      expect(status).toBe(400);
      expect(body.data).toBeUndefined();
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0].message).toBe(
        `The query's estimated cost is ${cost}; the maximum is 100000`,
      );
      expect(body.errors[0].extensions.resource.resourceType).toBe('OperationOutcome');
      expect(await storedVersions(server)).toBe(before);
    },
    60_000,
  );

  it('refuses a query over the limit before validating it: its validation errors are not reported', async () => {
    const { status, body } = await graphql(
      server,
      aliases(10_000, 'Patient(id: qcp) { noSuchField }'),
    );
    expect(status).toBe(400);
    expect(body.errors.map((e: { message: string }) => e.message)).toEqual([
      "The query's estimated cost is 210000; the maximum is 100000",
    ]);
  });
});

describe('reads against a cost limit of 2,000', () => {
  let server: TestServer;
  let ids: { patients: string[]; reports: string[] };
  beforeAll(async () => {
    server = await startTestServer('pglite', { GRAPHIR_GRAPHQL_MAX_COST: '2000' });
    const entry = [0, 1, 2].flatMap((i) => patientEntries(i));
    const loaded = await server.fhir('/', {
      method: 'POST',
      body: { resourceType: 'Bundle', type: 'transaction', entry },
    });
    expect(loaded.status).toBe(200);
    const idsOf = async (type: string) =>
      ((await (await server.fhir(`/${type}?_count=10`)).json()).entry as { resource: any }[]).map(
        (e) => e.resource.id as string,
      );
    ids = { patients: await idsOf('Patient'), reports: await idsOf('DiagnosticReport') };
  });
  afterAll(() => server?.stop());

  it('counts each root read as 20 plus what it selects: 95 reads at it, 96 past it', async () => {
    const at = await graphql(server, aliases(95, `Patient(id: "${ids.patients[0]}") { id }`));
    expect(at.status).toBe(200);
    expect(at.body.errors).toBeUndefined();
    const past = await graphql(server, aliases(96, `Patient(id: "${ids.patients[0]}") { id }`));
    expect(past.status).toBe(400);
    expect(past.body.errors[0].message).toMatch(/estimated cost is 2016; the maximum is 2000/);
  });

  it.each(Object.keys(QUERIES))('runs benchmark query %s, at a 50th of the default', async (q) => {
    const [query, variables] = QUERIES[q](ids, 1);
    const { status, body } = await graphql(server, query, variables);
    expect(status, JSON.stringify(body.errors)).toBe(200);
    expect(body.errors).toBeUndefined();
  });
});

it('costs every HL7 conformance case under a 50th of the default limit', () => {
  const suite = new URL('../fixtures/conformance/fhir-graphql-r4/', import.meta.url);
  const manifest = JSON.parse(readFileSync(new URL('manifest.json', suite), 'utf8')) as {
    cases: { file: string; operationName: string | null; variables: object | null }[];
  };
  const limits = {
    maxDepth: 15,
    maxCost: 2000,
    maxSearches: 20,
    maxPageSize: 1000,
    defaultPageSize: 20,
    maxQueryBytes: 256 * 1024,
    maxTokens: 20_000,
    fhirpathBudgetMs: 50,
  };
  const costed = manifest.cases
    .filter((c) => !c.file.includes('parser-tests'))
    .map((c) => {
      const text = readFileSync(new URL(c.file, suite), 'utf8');
      const query = text.split(/^=== query\n/m)[1].split(/^=== expected\n/m)[0];
      const measured = measureQuery(
        parse(query),
        c.operationName ?? undefined,
        { ...c.variables },
        limits,
      );
      return { file: c.file, cost: measured.cost, errors: measured.errors.map((e) => e.message) };
    });
  expect(costed.length).toBeGreaterThan(30);
  for (const { file, cost, errors } of costed) {
    expect(errors, file).toEqual([]);
    expect(cost, file).toBeLessThanOrEqual(2000);
  }
});

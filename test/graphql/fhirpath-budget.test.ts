/**
 * FHIRPath in GraphQL (`name(fhirpath: "…")`) cannot hold the server: a new expression is compiled
 * once for a whole list, an expression is at most MAX_FHIRPATH_CHARS characters, and a query
 * spends at most GRAPHIR_GRAPHQL_FHIRPATH_BUDGET_MS evaluating them; past it the field fails with
 * an error and the server keeps answering. The queries are those that stalled the server for
 * seconds: a long expression over 300 Patients, and a costly `where()` over 200.
 */
import fhirpath from 'fhirpath';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_FHIRPATH_CHARS } from '../../runtime/graphql/compile-fhirpath.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const PATIENTS = 300;

async function graphql(server: TestServer, query: string) {
  const response = await server.fhir('/$graphql', {
    method: 'POST',
    body: JSON.stringify({ query }),
    headers: { 'Content-Type': 'application/json' },
  });
  return { status: response.status, body: await response.json() };
}

/** `family = 'x0' or family = 'x1' or …`, `clauses` of them. */
const clauses = (count: number, salt: string) =>
  Array.from({ length: count }, (_, i) => `family = '${salt}${i}'`).join(' or ');

/** An expression exactly `length` characters long. */
const ofLength = (length: number) => {
  const base = "family.exists() or family = '";
  return `${base}${'x'.repeat(length - base.length - 1)}'`;
};

const listQuery = (expression: string, count = PATIENTS) =>
  `{ PatientList(_count: ${count}) { name(fhirpath: ${JSON.stringify(expression)}) { family } } }`;

async function load(server: TestServer, count: number) {
  const entry = Array.from({ length: count }, (_, i) => ({
    resource: { resourceType: 'Patient', name: [{ family: `Family${i}`, given: ['Ann', 'Bo'] }] },
    request: { method: 'POST', url: 'Patient' },
  }));
  const response = await server.fhir('/', {
    method: 'POST',
    body: { resourceType: 'Bundle', type: 'transaction', entry },
  });
  expect(response.status).toBe(200);
}

describe('FHIRPath in GraphQL', () => {
  let server: TestServer;
  beforeAll(async () => {
    // A budget no evaluation here comes near, however loaded the machine: these are not about it.
    server = await startTestServer('pglite', { GRAPHIR_GRAPHQL_FHIRPATH_BUDGET_MS: '60000' });
    await load(server, PATIENTS);
  });
  afterAll(() => server?.stop());

  it('an expression as long as the limit', async () => {
    const { status, body } = await graphql(server, listQuery(ofLength(MAX_FHIRPATH_CHARS), 2));
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.PatientList).toHaveLength(2);
  });

  it('an expression one character longer', async () => {
    const { status, body } = await graphql(server, listQuery(ofLength(MAX_FHIRPATH_CHARS + 1), 2));
    expect(status).toBe(200);
    expect(body.data.PatientList[0].name).toBeNull();
    expect(body.errors[0].message).toMatch(/is 1001 characters long; the maximum is 1000/);
  });

  it('compiles a new expression once for a whole list', async () => {
    const compile = vi.spyOn(fhirpath, 'compile');
    try {
      const { status, body } = await graphql(server, listQuery("family.startsWith('Family1')"));
      expect(status).toBe(200);
      expect(body.errors).toBeUndefined();
      expect(compile).toHaveBeenCalledTimes(1);
    } finally {
      compile.mockRestore();
    }
  });

  it('refuses the 150-clause expression over 300 Patients, and keeps answering', async () => {
    const query = listQuery(clauses(150, 'a'));
    const [attack, health] = await Promise.all([
      graphql(server, query),
      fetch(`${server.url}/healthz`).then((r) => r.status),
    ]);
    expect(attack.status).toBe(200);
    expect(attack.body.errors[0].message).toMatch(/characters long; the maximum is/);
    expect(health).toBe(200);
  });
});

describe('the FHIRPath budget', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The cheap query evaluates in well under a millisecond, the costly one in tens of them: a
    // budget between, with room on both sides for a loaded machine.
    server = await startTestServer('pglite', { GRAPHIR_GRAPHQL_FHIRPATH_BUDGET_MS: '20' });
    await load(server, 200);
  });
  afterAll(() => server?.stop());

  it('within the budget', async () => {
    const { status, body } = await graphql(server, listQuery("family = 'Family7'", 10));
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
  });

  it('past the budget: the field fails, and the server keeps answering', async () => {
    // Each item's evaluation walks a costly where(); 200 of them take far more than 20 ms.
    const where = `given.where(${clauses(30, 'b').replaceAll('family', '$this')}).exists()`;
    expect(where.length).toBeLessThanOrEqual(MAX_FHIRPATH_CHARS);
    const { status, body } = await graphql(server, listQuery(where, 200));
    expect(status).toBe(200);
    expect(body.errors.map((e: { message: string }) => e.message)).toContainEqual(
      expect.stringMatching(/FHIRPath evaluation took more than this query's budget of 20 ms/),
    );
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});

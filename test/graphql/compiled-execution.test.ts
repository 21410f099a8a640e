/**
 * A query that recurs runs compiled from its second run on (runtime/graphql/compiled-execution.ts):
 * every answer, errors included, must be the one the interpreter gives. Each request here is sent
 * three times; the server's metrics say which runs were compiled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledExecutions } from '../support/compiled-executions.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

interface Case {
  readonly query: string;
  readonly variables?: Record<string, unknown>;
  readonly operationName?: string;
  readonly get?: boolean;
  /** Whether its runs after the first are compiled. */
  readonly compiled: boolean;
}

const PATIENT = {
  resourceType: 'Patient',
  id: 'jit-1',
  active: true,
  gender: 'female',
  birthDate: '1970-03-04',
  name: [
    { use: 'official', family: 'Chalmers', given: ['Peter', 'James'] },
    { use: 'nickname', given: ['Jim'] },
  ],
  extension: [
    { url: 'http://example.org/fhir/StructureDefinition/pharmacy', valueString: 'Main St' },
  ],
};

const CASES: Record<string, Case> = {
  'a read with variables': {
    query: 'query ($id: ID!) { Patient(id: $id) { id name { family given use } } }',
    variables: { id: 'jit-1' },
    compiled: true,
  },
  'a read of an unknown id (a field error)': {
    query: '{ Patient(id: "nobody") { id } }',
    compiled: true,
  },
  'variables that do not fit their types (400, no data)': {
    query: 'query ($id: ID!) { Patient(id: $id) { id } }',
    variables: {},
    compiled: true,
  },
  'array filters, FHIRPath and paging of a repeating element': {
    query: `{ Patient(id: "jit-1") {
      official: name(use: "official") { family }
      nick: name(fhirpath: "use = 'nickname'") { given }
      second: name(_count: 1, _offset: 1) { use }
      extension(url: "http://example.org/fhir/StructureDefinition/pharmacy") { valueString }
      missing: deceasedBoolean
    } }`,
    compiled: true,
  },
  'a search with fragments, aliases and @skip': {
    query: `query Named($skip: Boolean!) {
      women: PatientList(gender: "female", name_contains: "chal") { ...basics }
      none: PatientList(family: "Nobody") { id }
      PatientConnection(_count: 1) { count pageSize first next edges { mode score } }
      __typename @skip(if: $skip)
    }
    fragment basics on Patient { id birthDate active }`,
    variables: { skip: false },
    operationName: 'Named',
    compiled: true,
  },
  // The compiled code is generated from the query: literals must stay data.
  'string literals that read as JavaScript': {
    query: `{ Patient(id: "jit-1") {
      a: name(family: "\\"); globalThis.injected = 1; (\\"") { family }
      b: extension(url: "\${globalThis.injected = 2}\\u0027; globalThis.injected = 3; //") { url }
      c: name(fhirpath: "use != '\\"); globalThis.injected = 4; //'") { given }
    } }`,
    compiled: true,
  },
  'a cursor this server never gave out (a field error)': {
    query: '{ PatientConnection(_cursor: "bogus") { count } }',
    compiled: true,
  },
  'GET with the query in the URL': {
    query: '{ PatientList(_id: "jit-1") { id gender } }',
    get: true,
    compiled: true,
  },
  'a query resolving references (interpreted: contained.ts)': {
    query: '{ PatientList { id generalPractitioner { resource { ... on Practitioner { id } } } } }',
    compiled: false,
  },
  'a query shaped by @flatten (interpreted: directives.ts)': {
    query: '{ Patient(id: "jit-1") { name @flatten { family } } }',
    compiled: false,
  },
};

describe('compiled execution', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer('pglite');
    const response = await server.fhir('/Patient/jit-1', { method: 'PUT', body: PATIENT });
    expect(response.status).toBeLessThan(300);
  });
  afterAll(() => server?.stop());

  const send = (item: Case) => {
    if (item.get) {
      const params = new URLSearchParams({ query: item.query });
      return server.fhir(`/$graphql?${params}`);
    }
    return server.fhir('/$graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        query: item.query,
        ...(item.variables ? { variables: item.variables } : {}),
        ...(item.operationName ? { operationName: item.operationName } : {}),
      }),
    });
  };

  it.each(Object.entries(CASES))('%s', async (_name, item) => {
    const answers: { status: number; body: unknown }[] = [];
    const before = await compiledExecutions(server.url);
    for (let run = 0; run < 3; run++) {
      const response = await send(item);
      answers.push({ status: response.status, body: await response.json() });
    }
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    expect((await compiledExecutions(server.url)) - before).toBe(item.compiled ? 2 : 0);
    expect((globalThis as { injected?: unknown }).injected).toBeUndefined();
  });
});

/**
 * Introspection answers exactly what graphql-js's executor answers, for any selection, while
 * other requests keep being answered: a new introspection text used to block the server for
 * seconds (test/graphql/graphql-http.test.ts checks that a repeated text is answered from the cache).
 */
import { execute, getIntrospectionQuery, parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExecutableSchema } from '../../runtime/graphql/build-executable-schema.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const FULL = getIntrospectionQuery({
  descriptions: true,
  specifiedByUrl: true,
  directiveIsRepeatable: true,
  schemaDescription: true,
  inputValueDeprecation: true,
  oneOf: true,
});

const SELECTIVE = `query Types($name: String!, $skipFields: Boolean!) {
  a: __type(name: $name) {
    n: name
    kind
    fields(includeDeprecated: true) @skip(if: $skipFields) {
      name
      args { name defaultValue type { kind name ofType { kind name } } }
    }
    ...More
  }
  missing: __type(name: "NoSuchType") { name }
  __typename
  s: __schema {
    queryType { name }
    mutationType { ... on __Type { name } }
    directives { name isRepeatable locations args { name } }
  }
}
fragment More on __Type {
  possibleTypes { name }
  enumValues(includeDeprecated: true) @include(if: $skipFields) { name isDeprecated }
  inputFields { name type { kind ofType { name } } }
}`;

describe('GraphQL introspection', () => {
  let server: TestServer;
  const schema = buildExecutableSchema();
  const post = async (query: string, variables?: Record<string, unknown>) => {
    const response = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({ query, ...(variables ? { variables } : {}) }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(200);
    return response.text();
  };
  const graphqlJs = (query: string, variableValues?: Record<string, unknown>) =>
    JSON.stringify({
      data: (execute({ schema, document: parse(query), variableValues }) as { data: unknown }).data,
    });

  // Computed before the server starts: seconds without a request would let it close the idle
  // connection the next request is about to reuse.
  let fullAnswer: string;
  beforeAll(async () => {
    fullAnswer = graphqlJs(FULL);
    server = await startTestServer('pglite');
    await server.fhir('/Patient/in1', {
      method: 'PUT',
      body: { resourceType: 'Patient', id: 'in1' },
    });
  });
  afterAll(() => server?.stop());

  it('answers the full introspection query as graphql-js does, byte for byte', async () => {
    expect(await post(FULL)).toBe(fullAnswer);
  }, 120_000);

  it.each([
    ['an object type, fields kept', { name: 'Patient', skipFields: false }],
    ['a union, fields skipped', { name: 'AnyResource', skipFields: true }],
    ['an enum', { name: 'ResourceType', skipFields: true }],
    ['an input type', { name: 'PatientCreate', skipFields: false }],
  ])(
    'answers aliases, fragments, @skip/@include and variables as graphql-js does: %s',
    async (_name, variables) => {
      const want = graphqlJs(SELECTIVE, variables);
      expect(await post(SELECTIVE, variables)).toBe(want);
    },
  );

  it('answers 400 with errors and no data when the variables do not fit', async () => {
    const response = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({
        query: 'query ($name: String!) { __type(name: $name) { name } }',
        variables: { name: 42 },
      }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.data).toBeUndefined();
    expect(body.errors[0].message).toMatch(/\$name/);
  });

  it('answers a reformatted, commented text like the original', async () => {
    const query = '{ __schema { queryType { name } } __type(name: "Patient") { name kind } }';
    const reformatted = `# the same query\nquery {\n  __schema { queryType { name } }\n  __type(name: "Patient") {\n    name # its name\n    kind\n  }\n}`;
    expect(await post(reformatted)).toBe(await post(query));
  });

  it('keeps answering other queries while it computes a new text', async () => {
    let headers = false;
    const introspection = server
      .fhir('/$graphql', {
        method: 'POST',
        body: JSON.stringify({ query: FULL.replace('queryType', 'rotated: queryType') }),
        headers: { 'Content-Type': 'application/json' },
      })
      .then((response) => {
        headers = true;
        return response.text();
      });
    let answered = 0;
    while (!headers) {
      const body = await post('{ Patient(id: in1) { id } }');
      expect(JSON.parse(body)).toEqual({ data: { Patient: { id: 'in1' } } });
      if (!headers) answered++;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(JSON.parse(await introspection).data.__schema.rotated).toMatchObject({ name: 'Query' });
    // graphql-js blocked the event loop for the whole run: one answer at most got through.
    expect(answered).toBeGreaterThanOrEqual(5);
  }, 120_000);
});

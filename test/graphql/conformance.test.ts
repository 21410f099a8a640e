/**
 * HL7's FHIR R4 GraphQL conformance cases, from test/fixtures/conformance/fhir-graphql-r4 (see
 * its README: source, commit, licence), run against a real server: every file in resources/ is loaded into the test
 * project, and every case in manifest.json is sent over HTTP and compared as the README says.
 *
 * Harness decisions, where the reference harness (HL7's Java engine with a stub store) and a live
 * server differ:
 * - The suite's XML examples were converted to JSON with every primitive as a string
 *   (`"valueQuantity": {"value": "185"}`); FHIR JSON writes decimals, integers and booleans as
 *   JSON numbers and booleans (http://hl7.org/fhir/R4/json.html#primitive), and the server refuses
 *   anything else. Before loading, the harness restores those JSON types from the generated type
 *   definitions; no value changes (case 04 expects `"value": 185`).
 * - Instance-level cases go to `[base]/{type}/{id}/$graphql` with the id of the focus resource: the
 *   reference harness runs on the focus file whatever the context says, and cases 08, 09 and 29
 *   name ids their files do not have (MedicationDispense/meddisp008 for meddisp0308,
 *   List/example-long for long), which a live server would answer with 404, passing case 08 for
 *   the wrong reason.
 * - Case 30 is case 18 with the focus loaded by a versioned id (`example/_history/1`). A stored
 *   resource always has its logical id and `meta.versionId`, so on a live server this is the
 *   instance query on Patient/example (version 1); the case checks that `id` and the reverse search
 *   use the bare id.
 * - Cases 16 and 17 were answered by a stub that returns exactly Patient/example and Patient/xds;
 *   as their notes say, they run in a second project holding only those two Patients (the main
 *   project also has Patient/glossy, which is active too).
 * - Case 17 (PatientConnection) checks the shape, not the stub's numbers and cursors.
 * - Case 14 selects `subject` twice without aliases: GraphQL merges the two selections into one
 *   object, where the reference engine writes a list of two; the expected list is merged the same
 *   way (the README accepts this).
 * - Every case that answers is sent twice, and must be answered the same: a plain query (no
 *   reference resolved, no shaping directive) runs compiled the second time
 *   (runtime/graphql/compiled-execution.ts), which the server's metrics confirm.
 * - Case 33 only has to parse: each `####` section is sent to the server, which must not answer
 *   with a syntax error (it may refuse the unknown fields). `EmptyParamList` (`user() {…}`) is
 *   the one standard GraphQL rejects, since the June 2018 grammar has no empty argument list;
 *   Graphir uses graphql-js's parser and is not lenient, so that section must be a syntax error.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDefinitionRegistry } from '../../generated/definitions/index.js';
import { compiledExecutions } from '../support/compiled-executions.js';
import { startTestServer, type FhirResponse, type TestServer } from '../support/test-server.js';

const SUITE = new URL('../fixtures/conformance/fhir-graphql-r4/', import.meta.url);

interface ManifestCase {
  readonly file: string;
  readonly name: string;
  readonly context: string | null;
  readonly focusResource: string | null;
  readonly operationName: string | null;
  readonly variables: Record<string, unknown> | null;
  readonly expectError: boolean;
  readonly parseOnly?: boolean;
  readonly httpGet?: boolean;
  readonly includesDataWrapper?: boolean;
}

type Resource = { resourceType: string; id: string } & Record<string, unknown>;

const read = (path: string) => readFileSync(new URL(path, SUITE), 'utf8');
const manifest = JSON.parse(read('manifest.json')) as { cases: ManifestCase[] };
const resources = readdirSync(new URL('resources/', SUITE))
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => {
    const resource = JSON.parse(read(`resources/${f}`)) as Resource;
    return [
      `resources/${f}`,
      restoreJsonTypes(resource, resource.resourceType) as Resource,
    ] as const;
  });
const resourceByFile = new Map<string, Resource>(resources);

/** Cases 16 and 17 run against a project holding only these (see above). */
const TWO_PATIENTS = ['resources/patient-example.json', 'resources/patient-example-xds.json'];
const IN_TWO_PATIENTS = new Set(['16-search-simple.txt', '17-search-full.txt']);

/** Numbers and booleans written as strings, back to JSON numbers and booleans, by FHIR type. */
function restoreJsonTypes(value: unknown, typeName: string): unknown {
  if (Array.isArray(value)) return value.map((item) => restoreJsonTypes(item, typeName));
  const registry = loadDefinitionRegistry();
  const primitive = registry.primitives[typeName];
  if (primitive) {
    if (typeof value !== 'string') return value;
    if (primitive.jsonType === 'number') return Number(value);
    if (primitive.jsonType === 'boolean') return value === 'true';
    return value;
  }
  if (!isPlainObject(value)) return value;
  const type =
    registry.types[typeof value.resourceType === 'string' ? value.resourceType : typeName];
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => {
      const element = type?.elements.find((e) => e.name === key);
      if (!element) return [key, child];
      const childType =
        element.kind === 'resource' && isPlainObject(child)
          ? String(child.resourceType)
          : element.type;
      return [key, restoreJsonTypes(child, childType)];
    }),
  );
}

/** The cases that run compiled the second time (see compiled-execution.ts for which may). */
const COMPILED_CASES = [
  '01-simple.txt',
  '02-filter-fhirpath.txt',
  '04-polymorphic.txt',
  '11-extension-complex.txt',
  '12-extension-complex-in.txt',
  '13-extension-complex-out.txt',
  '15-search-single.txt',
  '16-search-simple.txt',
  '18-reference-reverse.txt',
  '19-directive-skip.txt',
  '20-directive-include.txt',
  '21-directive-variable.txt',
  '29-list-sub.txt',
  '30-reference-reverse-history.txt',
  '31-server-instance-simple.txt',
  '32-server-root-simple.txt',
];

/** Why each `expect: error` case fails. */
const ERROR_REASONS: Record<string, RegExp> = {
  '03-wrong-field.txt': /Cannot query field "something" on type "Identifier"/,
  '08-reference-broken.txt': /MedicationRequest\/medrx0330/,
  '25-flatten-singleton2.txt': /@singleton: family has more than one value/,
};

/** `# header` lines, then `=== query` and `=== expected`. */
function readCase(file: string): { query: string; expected: string } {
  const text = read(file);
  const [, afterQuery] = text.split(/^=== query\n/m);
  const [query, expected] = afterQuery.split(/^=== expected\n/m);
  return { query, expected: expected.trim() };
}

/** The reference engine omits absent elements where graphql-js answers null. */
function pruneNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pruneNulls);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, pruneNulls(v)]),
  );
}

/** Case 14: `[{resource: {birthDate}}, {resource: {_birthDate}}]` as one merged object. */
function mergeDeep(items: readonly Record<string, unknown>[]): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const item of items) {
    for (const [key, value] of Object.entries(item)) {
      const before = merged[key];
      merged[key] =
        isPlainObject(before) && isPlainObject(value) ? mergeDeep([before, value]) : value;
    }
  }
  return merged;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function expectedData(item: ManifestCase, expected: string): unknown {
  const json = JSON.parse(expected) as Record<string, unknown>;
  if (item.file === '14-extension-simple.txt')
    return { subject: mergeDeep(json.subject as Record<string, unknown>[]) };
  return json;
}

describe('FHIR R4 GraphQL conformance (fhir-test-cases r4/graphql)', () => {
  let server: TestServer;
  let twoPatientsToken: string;

  const put = async (list: readonly Resource[], token?: string) => {
    const entry = list.map((resource) => ({
      resource,
      request: { method: 'PUT', url: `${resource.resourceType}/${resource.id}` },
    }));
    const response = await server.fhir('/', {
      method: 'POST',
      body: { resourceType: 'Bundle', type: 'transaction', entry },
      ...(token ? { token } : {}),
    });
    expect(response.status, await response.clone().text()).toBe(200);
  };

  beforeAll(async () => {
    server = await startTestServer('pglite');
    await put(resources.map(([, resource]) => resource));
    twoPatientsToken = (await server.createProject('Two patients')).token;
    await put(
      TWO_PATIENTS.map((file) => resourceByFile.get(file)!),
      twoPatientsToken,
    );
  });
  afterAll(() => server?.stop());

  /** Cases whose second run was compiled: those that resolve no reference and use no directive. */
  const ranCompiled: string[] = [];

  /** The case's URL: system level, or the focus resource's own type and id. */
  const pathOf = (item: ManifestCase): string => {
    if (!item.focusResource) return '/$graphql';
    const focus = resourceByFile.get(item.focusResource)!;
    const [type] = (item.context ?? '').replace(/^\//, '').split('/');
    expect(type, 'context and focus resource name the same type').toBe(focus.resourceType);
    return `/${focus.resourceType}/${focus.id}/$graphql`;
  };

  const send = (item: ManifestCase, query: string): Promise<FhirResponse> => {
    const token = IN_TWO_PATIENTS.has(item.file) ? { token: twoPatientsToken } : {};
    if (item.httpGet) {
      const params = new URLSearchParams({ query });
      return server.fhir(`${pathOf(item)}?${params}`, token);
    }
    return server.fhir(pathOf(item), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        query,
        ...(item.variables ? { variables: item.variables } : {}),
        ...(item.operationName ? { operationName: item.operationName } : {}),
      }),
      ...token,
    });
  };

  const executed = manifest.cases.filter((c) => !c.parseOnly);
  it('covers every case in the manifest', () => {
    const files = readdirSync(SUITE).filter((f) => /^\d\d-.*\.txt$/.test(f));
    expect(manifest.cases.map((c) => c.file).sort()).toEqual(files.sort());
    expect(manifest.cases).toHaveLength(33);
  });

  it.each(executed.filter((c) => c.expectError).map((c) => [c.file, c] as const))(
    '%s fails as expected',
    async (_file, item) => {
      const { query, expected } = readCase(item.file);
      expect(expected).toBe('$error');
      const response = await send(item, query);
      const body = await response.json();
      expect(response.status === 400 || (body.errors?.length ?? 0) > 0, JSON.stringify(body)).toBe(
        true,
      );
      // Any error passes the suite; these make sure it is the error the case is about.
      expect(body.errors.map((e: { message: string }) => e.message).join('\n')).toMatch(
        ERROR_REASONS[item.file],
      );
    },
  );

  it.each(
    executed
      .filter((c) => !c.expectError && c.file !== '17-search-full.txt')
      .map((c) => [c.file, c] as const),
  )('%s', async (_file, item) => {
    const { query, expected } = readCase(item.file);
    const response = await send(item, query);
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    if (item.includesDataWrapper) {
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(pruneNulls(body)).toEqual(JSON.parse(expected));
    } else {
      expect(pruneNulls(body.data)).toEqual(expectedData(item, expected));
    }
    // The second run of a plain query runs compiled (compiled-execution.ts): the same answer.
    const compiledBefore = await compiledExecutions(server.url);
    const again = await send(item, query);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(body);
    if ((await compiledExecutions(server.url)) > compiledBefore) ranCompiled.push(item.file);
  });

  it('answered the plain queries the same when they ran compiled', () => {
    expect(ranCompiled.sort()).toEqual(COMPILED_CASES);
  });

  it('17-search-full.txt has the shape of a connection', async () => {
    const item = manifest.cases.find((c) => c.file === '17-search-full.txt')!;
    const { query } = readCase(item.file);
    const response = await send(item, query);
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.errors).toBeUndefined();
    const connection = pruneNulls(body.data.PatientConnection) as Record<string, any>;
    expect(connection).toMatchObject({
      count: 2,
      offset: 0,
      pagesize: expect.any(Number),
      edges: [
        { mode: 'match', resource: { id: 'example', active: true } },
        { mode: 'match', resource: { id: 'xds', active: true } },
      ],
    });
    expect(Object.keys(connection).sort()).toEqual(
      expect.arrayContaining(['count', 'edges', 'offset', 'pagesize']),
    );
    for (const cursor of ['first', 'previous', 'next', 'last'])
      if (cursor in connection) expect(typeof connection[cursor]).toBe('string');
    // Everything fits on one page: no next page to point to.
    expect(connection.next).toBeUndefined();
  });

  describe('33-parser-tests.txt', () => {
    const sections = readCase('33-parser-tests.txt')
      .query.split(/^#### /m)
      .slice(1)
      .map((section) => {
        const newline = section.indexOf('\n');
        return [section.slice(0, newline).trim(), section.slice(newline + 1)] as const;
      });
    /** Standard GraphQL has no empty argument list (see the header). */
    const REJECTED_BY_GRAPHQL = new Set(['EmptyParamList']);

    it('has every section of the suite', () => {
      expect(sections.map(([name]) => name)).toContain('EmptyParamList');
      expect(sections).toHaveLength(24);
    });

    it.each(sections)('%s', async (name, query) => {
      const response = await server.fhir('/$graphql', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ query }),
      });
      const body = await response.json();
      const syntaxErrors = (body.errors ?? []).filter((e: { message: string }) =>
        e.message.startsWith('Syntax Error'),
      );
      if (REJECTED_BY_GRAPHQL.has(name)) expect(syntaxErrors).toHaveLength(1);
      else expect(syntaxErrors, JSON.stringify(body.errors)).toEqual([]);
    });
  });
});

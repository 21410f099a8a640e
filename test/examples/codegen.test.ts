/**
 * examples/codegen/ works as a user would run it: GraphQL Code Generator, with the example's own
 * codegen.ts, types the example's operations from the schema a real server answers; the types
 * hold search variables to `string` and `number` (a type-check file whose misuses must fail);
 * the example compiles under `tsc --strict`; every operation validates on the server; and
 * client.ts, run with tsx, gets data back.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generate } from '@graphql-codegen/cli';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = join(ROOT, 'examples/codegen');
const GENERATED = join(EXAMPLE, 'generated/graphql.ts');

/**
 * Lines marked `@ts-expect-error` must not compile: were a variable typed `any` or `unknown`,
 * the directive would be unused, which tsc reports as an error of its own.
 */
const TYPE_CHECKS = `import type {
  CreatePatientMutationVariables,
  GetPatientQuery,
  GetPatientQueryVariables,
  PatientPagesQueryVariables,
  SearchPatientsQueryVariables,
} from './graphql.js';

export const fitting = [
  { id: 'p1' } satisfies GetPatientQueryVariables,
  { name: 'Chalmers', born: ['ge1970', 'lt1980'] } satisfies SearchPatientsQueryVariables,
  { born: 'ge1970' } satisfies SearchPatientsQueryVariables,
  { count: 10, cursor: null } satisfies PatientPagesQueryVariables,
  { res: { resourceType: 'Patient', name: [{ family: 'Chalmers' }] } } satisfies CreatePatientMutationVariables,
];

export const misfits = [
  // @ts-expect-error ID! is required
  {} satisfies GetPatientQueryVariables,
  // @ts-expect-error ID takes no boolean
  { id: true } satisfies GetPatientQueryVariables,
  // @ts-expect-error a String search argument takes no number
  { name: 42 } satisfies SearchPatientsQueryVariables,
  // @ts-expect-error [String] holds strings
  { born: [1974] } satisfies SearchPatientsQueryVariables,
  // @ts-expect-error _count is an Int
  { count: '10' } satisfies PatientPagesQueryVariables,
  // @ts-expect-error PatientCreate has no field "nom"
  { res: { nom: 'Chalmers' } } satisfies CreatePatientMutationVariables,
];

export const birthDate = (data: GetPatientQuery): string | null | undefined => data.Patient?.birthDate;
// @ts-expect-error birthDate is a string
export const birthYear = (data: GetPatientQuery): number | null | undefined => data.Patient?.birthDate;
`;

describe('the GraphQL Code Generator example', () => {
  let server: TestServer;
  let patientId: string;

  beforeAll(async () => {
    server = await startTestServer('pglite', { LOG_LEVEL: 'silent' });
    const patient = await server.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient', name: [{ family: 'Codegen' }], birthDate: '1961-06-01' },
    });
    patientId = (await patient.json()).id;
    const report = await server.fhir('/DiagnosticReport', {
      method: 'POST',
      body: {
        resourceType: 'DiagnosticReport',
        status: 'final',
        code: { text: 'Lipid panel' },
        subject: { reference: `Patient/${patientId}` },
      },
    });
    expect(report.status).toBe(201);
  });
  afterAll(() => server?.stop());

  /** POSTs one of the example's operations, as client.ts sends it; fails on any error. */
  const send = async (name: string, variables: Record<string, unknown>) => {
    const query = readFileSync(join(EXAMPLE, 'operations', `${name}.graphql`), 'utf8');
    const response = await server.fhir('/$graphql', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    const body = await response.json();
    expect({ name, status: response.status, errors: body.errors }).toEqual({
      name,
      status: 200,
      errors: undefined,
    });
    return body.data;
  };

  it('has operations that each validate on the server and answer with data', async () => {
    expect(readdirSync(join(EXAMPLE, 'operations')).sort()).toEqual([
      'CreatePatient.graphql',
      'GetPatient.graphql',
      'PatientPages.graphql',
      'PatientReports.graphql',
      'SearchPatients.graphql',
    ]);
    expect(await send('GetPatient', { id: patientId })).toEqual({
      Patient: {
        id: patientId,
        birthDate: '1961-06-01',
        name: [{ family: 'Codegen', given: null }],
      },
    });
    expect(await send('SearchPatients', { name: 'Codegen', born: ['ge1960', 'lt1970'] })).toEqual({
      PatientList: [
        { id: patientId, birthDate: '1961-06-01', name: [{ family: 'Codegen', given: null }] },
      ],
    });
    expect(await send('SearchPatients', { name: 'Codegen', born: 'ge1970' })).toEqual({
      PatientList: [],
    });
    expect(await send('PatientReports', { id: patientId })).toMatchObject({
      Patient: { DiagnosticReportList: [{ status: 'final', code: { text: 'Lipid panel' } }] },
    });
    const created = await send('CreatePatient', {
      res: { resourceType: 'Patient', name: [{ family: 'Paged', given: ['Second'] }] },
    });
    expect(created.PatientCreate).toMatchObject({ name: [{ family: 'Paged', given: ['Second'] }] });

    const first = await send('PatientPages', { count: 1 });
    expect(first.PatientConnection).toMatchObject({ count: 2, edges: [{ resource: {} }] });
    const second = await send('PatientPages', { count: 1, cursor: first.PatientConnection.next });
    expect(second.PatientConnection).toMatchObject({ count: 2, next: null });
    expect(
      [first, second].map((page) => page.PatientConnection.edges[0].resource.id).sort(),
    ).toEqual([patientId, created.PatientCreate.id].sort());
  });

  it('refuses a bad token with the server’s message', async () => {
    const config = await exampleConfig(server, 'not-a-token');
    await expect(generate({ ...config, cwd: EXAMPLE, silent: true }, false)).rejects.toThrow(
      /The access token is not valid/,
    );
  });

  it('generates types, which give search variables strings and numbers and compile under --strict', async () => {
    const config = await exampleConfig(server, server.project.token);
    await generate({ ...config, cwd: EXAMPLE, silent: true }, true);

    const source = readFileSync(GENERATED, 'utf8');
    expect(variablesType(source, 'GetPatientQueryVariables')).toEqual(['id: string | number;']);
    expect(variablesType(source, 'SearchPatientsQueryVariables')).toEqual([
      'name?: string | null | undefined;',
      'born?: Array<string | null | undefined> | string | null | undefined;',
    ]);
    expect(variablesType(source, 'PatientPagesQueryVariables')).toEqual([
      'count?: number | null | undefined;',
      'cursor?: string | null | undefined;',
    ]);
    expect(variablesType(source, 'CreatePatientMutationVariables')).toEqual([
      'res: PatientCreate;',
    ]);
    expect(source).not.toMatch(/[:<|]\s*any\b/);

    writeFileSync(join(EXAMPLE, 'generated/type-checks.ts'), TYPE_CHECKS);
    const tsc = await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', EXAMPLE], {
      cwd: ROOT,
    }).catch((failure: { stdout: string }) => ({ stdout: failure.stdout, failed: true }));
    expect(tsc.stdout).toBe('');
    expect(tsc).not.toHaveProperty('failed');
  }, 300_000);

  it('runs client.ts against the server', async () => {
    const { stdout } = await run(
      join(ROOT, 'node_modules/.bin/tsx'),
      [join(EXAMPLE, 'client.ts')],
      {
        cwd: EXAMPLE,
        env: { ...process.env, GRAPHIR_URL: server.url, GRAPHIR_TOKEN: server.project.token },
      },
    );
    const total = (await (await server.fhir('/Patient?_summary=count')).json()).total;
    expect(JSON.parse(stdout)).toEqual({
      id: expect.any(String),
      family: 'Chalmers',
      bornIn: ['1974-12-25'],
      total,
      pages: Math.ceil(total / 10),
      reportIds: [],
    });
  }, 60_000);
});

/**
 * codegen.ts as a user runs it, its environment pointing at the server; evaluated afresh for each
 * token, since it reads the environment when it loads.
 */
let configLoads = 0;
async function exampleConfig(server: TestServer, token: string) {
  const saved = { GRAPHIR_URL: process.env.GRAPHIR_URL, GRAPHIR_TOKEN: process.env.GRAPHIR_TOKEN };
  Object.assign(process.env, { GRAPHIR_URL: server.url, GRAPHIR_TOKEN: token });
  try {
    // A new URL loads it afresh; a number, since a token in the query string (dots, dashes) once
    // made the transform read the file as JavaScript.
    const url = new URL(`../../examples/codegen/codegen.ts?load=${++configLoads}`, import.meta.url);
    return (await import(url.href)).default;
  } finally {
    for (const [name, value] of Object.entries(saved))
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
  }
}

/** The members of a generated `Exact<{ … }>` variables type, one line each. */
function variablesType(source: string, name: string): string[] {
  const block = new RegExp(`export type ${name} = Exact<\\{\\n([\\s\\S]*?)\\n\\}>;`).exec(source);
  if (!block) throw new Error(`${name} is not in the generated types`);
  return block[1].split('\n').map((line) => line.trim());
}

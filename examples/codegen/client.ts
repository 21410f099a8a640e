/**
 * A typed GraphQL client in a few lines of plain fetch: each operation of `operations/` is sent
 * by name, and the compiler holds its variables and its result to the types GraphQL Code
 * Generator made for it (`generated/graphql.ts`, from `npx graphql-codegen`).
 */
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type {
  CreatePatientMutation,
  CreatePatientMutationVariables,
  GetPatientQuery,
  GetPatientQueryVariables,
  PatientPagesQuery,
  PatientPagesQueryVariables,
  PatientReportsQuery,
  PatientReportsQueryVariables,
  SearchPatientsQuery,
  SearchPatientsQueryVariables,
} from './generated/graphql.js';

/** Each operation by its name (and file name), with its variables and its result. */
export interface Operations {
  GetPatient: { variables: GetPatientQueryVariables; result: GetPatientQuery };
  SearchPatients: { variables: SearchPatientsQueryVariables; result: SearchPatientsQuery };
  PatientPages: { variables: PatientPagesQueryVariables; result: PatientPagesQuery };
  PatientReports: { variables: PatientReportsQueryVariables; result: PatientReportsQuery };
  CreatePatient: { variables: CreatePatientMutationVariables; result: CreatePatientMutation };
}

export type OperationName = keyof Operations;

export type Run = <Name extends OperationName>(
  name: Name,
  variables: Operations[Name]['variables'],
) => Promise<Operations[Name]['result']>;

/** `root`: the server's root URL (`http://localhost:8080`); `token`: an access token. */
export function graphirClient(root: string, token: string): Run {
  return async (name, variables) => {
    const response = await fetch(`${root}/fhir/R4/$graphql`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/graphql-response+json, application/json;q=0.9',
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ query: operationText(name), variables }),
    });
    const body = (await response.json()) as {
      data?: Operations[typeof name]['result'] | null;
      errors?: { message: string }[];
    };
    if (body.errors?.length || !body.data)
      throw new Error(
        `${name}: ${body.errors?.map((e) => e.message).join('; ') ?? response.status}`,
      );
    return body.data;
  };
}

function operationText(name: OperationName): string {
  return readFileSync(new URL(`operations/${name}.graphql`, import.meta.url), 'utf8');
}

/** Typical calls, each typed end to end: the patients born in the 1970s named Chalmers, and so on. */
export async function example(run: Run) {
  const created = await run('CreatePatient', {
    res: {
      resourceType: 'Patient',
      name: [{ family: 'Chalmers', given: ['Peter', 'James'] }],
      birthDate: '1974-12-25',
    },
  });
  const id = created.PatientCreate?.id;
  if (!id) throw new Error('PatientCreate returned no id');

  const read = await run('GetPatient', { id });
  const family: string | null | undefined = read.Patient?.name?.[0]?.family;

  const found = await run('SearchPatients', { name: 'Chalmers', born: ['ge1970', 'lt1980'] });
  const bornIn: (string | null | undefined)[] = found.PatientList?.map((p) => p?.birthDate) ?? [];

  const firstPage = await run('PatientPages', { count: 10 });
  const pages = [firstPage];
  for (let next = firstPage.PatientConnection?.next; next;) {
    const page = await run('PatientPages', { count: 10, cursor: next });
    pages.push(page);
    next = page.PatientConnection?.next;
  }
  const total: number | null | undefined = firstPage.PatientConnection?.count;

  const reports = await run('PatientReports', { id });
  const reportIds = reports.Patient?.DiagnosticReportList?.map((r) => r?.id) ?? [];

  return { id, family, bornIn, total, pages: pages.length, reportIds };
}

// `npx tsx client.ts`, with GRAPHIR_URL and GRAPHIR_TOKEN as for codegen.ts.
if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const token = process.env.GRAPHIR_TOKEN;
  if (!token) throw new Error('Set GRAPHIR_TOKEN to an access token of the server');
  const run = graphirClient(process.env.GRAPHIR_URL ?? 'http://localhost:8080', token);
  console.log(JSON.stringify(await example(run)));
}

/**
 * R4's overlap rule for the conditional entries of a transaction (runtime/rest/transaction-overlap.ts):
 * entries whose identities overlap, conditional ones resolved, make the transaction fail; two
 * entries never make two resources of one condition. Every ordered pair of forms, at least one
 * of them conditional, is sent with nothing matching the condition yet and with one match.
 * @see http://hl7.org/fhir/R4/http.html#trules
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { storedVersions } from '../support/stored-versions.js';
import { startTestServer, type FhirResponse, type TestServer } from '../support/test-server.js';

const SYSTEM = 'urn:e3';

interface Entry {
  readonly resource?: object;
  readonly request: { method: string; url: string; ifNoneExist?: string };
}

/** What an entry form needs: the condition's identifier value and the resource by-id forms name. */
interface Case {
  readonly value: string;
  readonly target: string;
}

const patient = (value: string, extra: object = {}) => ({
  resourceType: 'Patient',
  identifier: [{ system: SYSTEM, value }],
  ...extra,
});

/** JSON Patch in a Binary, as an R4 Bundle carries it. */
const patchEntry = (url: string, operations: unknown): Entry => ({
  resource: {
    resourceType: 'Binary',
    contentType: 'application/json-patch+json',
    data: Buffer.from(JSON.stringify(operations)).toString('base64'),
  },
  request: { method: 'PATCH', url },
});

/** Each form writes, or searches for, a Patient with the case's identifier. */
const FORMS: Record<string, { conditional: boolean; entry: (c: Case) => Entry }> = {
  'POST ifNoneExist': {
    conditional: true,
    entry: ({ value }) => ({
      resource: patient(value),
      request: { method: 'POST', url: 'Patient', ifNoneExist: `identifier=${SYSTEM}|${value}` },
    }),
  },
  'PUT ?search': {
    conditional: true,
    entry: ({ value }) => ({
      resource: patient(value),
      request: { method: 'PUT', url: `Patient?identifier=${SYSTEM}|${value}` },
    }),
  },
  'DELETE ?search': {
    conditional: true,
    entry: ({ value }) => ({
      request: { method: 'DELETE', url: `Patient?identifier=${SYSTEM}|${value}` },
    }),
  },
  'PUT by id': {
    conditional: false,
    entry: ({ value, target }) => ({
      resource: patient(value, { id: target }),
      request: { method: 'PUT', url: `Patient/${target}` },
    }),
  },
  'DELETE by id': {
    conditional: false,
    entry: ({ target }) => ({ request: { method: 'DELETE', url: `Patient/${target}` } }),
  },
  'PATCH by id': {
    conditional: false,
    entry: ({ value, target }) =>
      patchEntry(`Patient/${target}`, [
        { op: 'replace', path: '/identifier', value: [{ system: SYSTEM, value }] },
      ]),
  },
};
const FORM_NAMES = Object.keys(FORMS);

type Scenario = 'nothing matches' | 'one matches';

/**
 * The pairs a transaction carries out, in either order, with how many Patients then match the
 * condition; every other pair is refused. With nothing matching, the by-id forms name a Patient
 * of another identifier (PUT and PATCH give it the condition's). With one match, they name it.
 */
const CARRIED_OUT: Record<Scenario, Record<string, number>> = {
  'nothing matches': {
    'POST ifNoneExist + POST ifNoneExist': 1,
    'POST ifNoneExist + DELETE ?search': 1,
    'POST ifNoneExist + DELETE by id': 1,
    'PUT ?search + DELETE ?search': 1,
    'PUT ?search + DELETE by id': 1,
    'DELETE ?search + DELETE ?search': 0,
    'DELETE ?search + PUT by id': 1,
    'DELETE ?search + DELETE by id': 0,
    'DELETE ?search + PATCH by id': 1,
  },
  'one matches': { 'POST ifNoneExist + POST ifNoneExist': 1 },
};

const pairName = (first: string, second: string) =>
  [first, second].sort((a, b) => FORM_NAMES.indexOf(a) - FORM_NAMES.indexOf(b)).join(' + ');

const CASES = (['nothing matches', 'one matches'] as const).flatMap((scenario) =>
  FORM_NAMES.flatMap((first) =>
    FORM_NAMES.filter((second) => FORMS[first].conditional || FORMS[second].conditional).map(
      (second) =>
        [scenario, first, second, CARRIED_OUT[scenario][pairName(first, second)]] as const,
    ),
  ),
);

/** How an entry is named in a refusal: its index and its request. */
const named = (entries: readonly Entry[], index: number) =>
  `Bundle.entry[${index}] (${entries[index].request.method} ${entries[index].request.url}`;

describe.each(await availableEngines())('transaction entries overlapping on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  const create = async (body: object): Promise<string> =>
    (await (await server.fhir('/Patient', { method: 'POST', body })).json()).id;
  const transaction = (entries: readonly Entry[]) =>
    server.fhir('/', {
      method: 'POST',
      body: { resourceType: 'Bundle', type: 'transaction', entry: entries },
    });
  const matching = async (value: string): Promise<number> =>
    (await (await server.fhir(`/Patient?identifier=${SYSTEM}|${value}&_count=10`)).json()).entry
      ?.length ?? 0;

  /** 400 naming both entries with their requests, and nothing stored. */
  const expectRefused = async (
    entries: readonly Entry[],
    before: number,
    response: FhirResponse,
  ) => {
    expect(response.status).toBe(400);
    const outcome = await response.json();
    expect(outcome.resourceType).toBe('OperationOutcome');
    expect(outcome.issue[0].diagnostics).toContain(named(entries, 0));
    expect(outcome.issue[0].diagnostics).toContain(named(entries, 1));
    expect(outcome.issue[0].expression).toEqual(['Bundle.entry[0]', 'Bundle.entry[1]']);
    expect(await storedVersions(server)).toBe(before);
  };

  it.each(CASES)('%s: %s then %s', async (scenario, first, second, carriedOut) => {
    const value = randomUUID();
    const target =
      scenario === 'one matches'
        ? await create(patient(value))
        : await create(patient(`${value}-other`));
    const entries = [FORMS[first].entry({ value, target }), FORMS[second].entry({ value, target })];
    const before = await storedVersions(server);
    const response = await transaction(entries);
    if (carriedOut === undefined) return expectRefused(entries, before, response);
    expect(response.status).toBe(200);
    expect(await matching(value)).toBe(carriedOut);
  });

  it('refuses two conditional updates of one condition, however it is spelled, whose bodies do not match it', async () => {
    const value = randomUUID();
    const entries = [
      {
        resource: { resourceType: 'Patient' },
        request: { method: 'PUT', url: `Patient?identifier=${SYSTEM}|${value}&active=true` },
      },
      {
        resource: { resourceType: 'Patient' },
        request: {
          method: 'PUT',
          url: `Patient?active=true&identifier=${encodeURIComponent(`${SYSTEM}|${value}`)}`,
        },
      },
    ];
    const before = await storedVersions(server);
    await expectRefused(entries, before, await transaction(entries));
  });

  it("refuses conditional updates of two conditions each matching the other's new resource", async () => {
    const value = randomUUID();
    const entries = [
      {
        resource: patient(value),
        request: { method: 'PUT', url: `Patient?identifier=${SYSTEM}|${value}` },
      },
      { resource: patient(value), request: { method: 'PUT', url: `Patient?identifier=${value}` } },
    ];
    const before = await storedVersions(server);
    await expectRefused(entries, before, await transaction(entries));
  });

  it("merges a conditional create into an earlier one whose resource it matches, and refuses one whose resource matches an earlier one's condition", async () => {
    const value = randomUUID();
    const narrow = {
      resource: patient(value, { name: [{ family: 'Narrow' }] }),
      request: {
        method: 'POST',
        url: 'Patient',
        ifNoneExist: `identifier=${SYSTEM}|${value}&family=Narrow`,
      },
    };
    const broad = {
      resource: patient(value, { name: [{ family: 'Broad' }] }),
      request: { method: 'POST', url: 'Patient', ifNoneExist: `identifier=${SYSTEM}|${value}` },
    };
    const before = await storedVersions(server);
    await expectRefused([broad, narrow], before, await transaction([broad, narrow]));
    const merged = await transaction([narrow, broad]);
    expect(merged.status).toBe(200);
    const [created, answered] = (await merged.json()).entry;
    expect(created.response.status).toBe('201 Created');
    expect(answered.response).toMatchObject({
      status: '200 OK',
      location: created.response.location,
    });
    expect(await matching(value)).toBe(1);
  });

  it('runs the entries of one condition in a batch one after another: one resource', async () => {
    const value = randomUUID();
    const response = await server.fhir('/', {
      method: 'POST',
      body: {
        resourceType: 'Bundle',
        type: 'batch',
        entry: [
          FORMS['PUT ?search'].entry({ value, target: '' }),
          FORMS['POST ifNoneExist'].entry({ value, target: '' }),
          FORMS['PUT ?search'].entry({ value, target: '' }),
        ],
      },
    });
    expect(response.status).toBe(200);
    expect(
      (await response.json()).entry.map((e: { response: { status: string } }) => e.response.status),
    ).toEqual(['201 Created', '200 OK', '200 OK']);
    expect(await matching(value)).toBe(1);
  });
});

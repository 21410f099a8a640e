/**
 * kill -9 in the middle of transaction Bundles, then a restart on the same storage: the store
 * opens cleanly, and every Bundle is either wholly stored or wholly absent — on PGlite in a data
 * directory (the embedded engine itself dies mid-write) and on PostgreSQL (the server's
 * connections drop with transactions open). Bundles answered 200 before the kill must be whole.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { availableEngines, type Engine } from '../support/test-databases.js';
import {
  createProject,
  processStorage,
  startServerProcess,
  token,
  type ProcessStorage,
  type ServerProcess,
} from './server-process.js';

const engines = await availableEngines();
/** Kills and restarts per engine; a PGlite restart costs seconds (WASM start, crash recovery). */
const ROUNDS = { pglite: 2, postgres: 3 };
/** Bundles sent at once in each round. */
const BUNDLES = 30;
const OBSERVATIONS = 8;
const SYSTEM = 'urn:graphir:crash-test';
const TYPES = ['Patient', 'Encounter', 'Observation', 'DiagnosticReport'] as const;

type Fate = 'stored' | 'cut';

describe.each(engines)('kill -9 during transaction Bundles (%s)', (engine: Engine) => {
  let storage: ProcessStorage | undefined;
  let server: ServerProcess | undefined;

  afterAll(async () => {
    await server?.kill('SIGKILL');
    await storage?.remove();
  });

  it('stores each Bundle wholly or not at all, and reopens cleanly', async () => {
    storage = await processStorage(engine);
    const { env } = storage;
    server = await startServerProcess(env);
    const { clientId, clientSecret } = await createProject(server.url, 'Crash');

    const fates = new Map<string, Fate>();
    for (let round = 1; round <= ROUNDS[engine]; round++) {
      const bearer = `Bearer ${await token(server.url, clientId, clientSecret)}`;
      const running = server;
      // Kill after a few answers, at a different point each round.
      const killAfter = 2 + round * 2;
      let answered = 0;
      let killing: Promise<unknown> | undefined;
      const markers = Array.from({ length: BUNDLES }, (_, i) => `r${round}-b${i}`);
      const results = await Promise.allSettled(
        markers.map(async (marker) => {
          const response = await fetch(`${running.url}/fhir/R4`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/fhir+json', Authorization: bearer },
            body: JSON.stringify(transaction(marker)),
          });
          const text = await response.text();
          if (response.status !== 200)
            throw new Error(`unexpected ${response.status}: ${text.slice(0, 500)}`);
          // A few milliseconds later, so the kill lands at a different point of the work.
          if (++answered === killAfter)
            killing = sleep(Math.random() * 20).then(() => running.kill('SIGKILL'));
          return marker;
        }),
      );
      expect(await killing).toBe('SIGKILL');
      results.forEach((result, i) => {
        if (result.status === 'fulfilled') fates.set(markers[i], 'stored');
        else {
          // Only a connection cut by the kill; never an error answer.
          expect(String(result.reason), markers[i]).not.toMatch(/unexpected/);
          fates.set(markers[i], 'cut');
        }
      });
      const cut = markers.filter((marker) => fates.get(marker) === 'cut');
      expect(cut.length, 'Bundles were still in flight at the kill').toBeGreaterThan(0);

      // The store opens cleanly on the same storage, and takes writes again.
      server = await startServerProcess(env);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const accessToken = await token(server.url, clientId, clientSecret);
      const created = await fetch(`${server.url}/fhir/R4/Patient`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/fhir+json',
          Authorization: `Bearer ${accessToken}`,
        },
        body: JSON.stringify({ resourceType: 'Patient', name: [{ family: `after-${round}` }] }),
      });
      expect(created.status).toBe(201);
      const counts = await storedCounts(server.url, accessToken);
      for (const [marker, fate] of fates) {
        const stored = counts.get(marker) ?? zeroCounts();
        const total = Object.values(stored).reduce((a, b) => a + b, 0);
        if (fate === 'stored' || total > 0) {
          expect(stored, `Bundle ${marker} (${fate})`).toEqual({
            Patient: 1,
            Encounter: 1,
            Observation: OBSERVATIONS,
            DiagnosticReport: 1,
          });
        }
      }
      await expectReferencesWithinBundles(server.url, accessToken);
    }
  }, 90_000);
});

/**
 * One Bundle whose parts the server writes in separate statements, so that only the transaction
 * keeps it whole: conditional creates (If-None-Exist: the Encounter and half the Observations),
 * plain creates (Patient, DiagnosticReport) and creates by PUT with client ids (the other
 * Observations). Every entry carries the Bundle's marker; the references are `urn:uuid:`s and
 * ids within the Bundle.
 */
function transaction(marker: string): object {
  const patient = `urn:uuid:${randomUUID()}`;
  const encounter = `urn:uuid:${randomUUID()}`;
  const code = { coding: [{ system: 'http://loinc.org', code: '8867-4' }], text: marker };
  const entry = (
    fullUrl: string,
    resource: Record<string, unknown>,
    request: object,
    ownIdentifier?: string,
  ) => ({
    fullUrl,
    resource: {
      ...resource,
      identifier: [
        { system: SYSTEM, value: marker },
        ...(ownIdentifier ? [{ system: `${SYSTEM}:own`, value: ownIdentifier }] : []),
      ],
    },
    request,
  });
  const ifNoneExist = (own: string) => ({ ifNoneExist: `identifier=${SYSTEM}:own|${own}` });
  const observations = Array.from({ length: OBSERVATIONS }, (_, i) => {
    const own = `${marker}-o${i}`;
    const resource = {
      resourceType: 'Observation',
      status: 'final',
      code,
      subject: { reference: patient },
      encounter: { reference: encounter },
      valueQuantity: { value: 60 + i, unit: 'beats/minute' },
    };
    if (i % 2 === 0) {
      const put = { method: 'PUT', url: `Observation/${own}` };
      return {
        reference: `Observation/${own}`,
        entry: entry(`urn:uuid:${randomUUID()}`, { ...resource, id: own }, put),
      };
    }
    const fullUrl = `urn:uuid:${randomUUID()}`;
    const post = { method: 'POST', url: 'Observation', ...ifNoneExist(own) };
    return { reference: fullUrl, entry: entry(fullUrl, resource, post, own) };
  });
  return {
    resourceType: 'Bundle',
    type: 'transaction',
    entry: [
      entry(
        patient,
        { resourceType: 'Patient', name: [{ family: marker, given: ['Crash'] }] },
        { method: 'POST', url: 'Patient' },
      ),
      entry(
        encounter,
        {
          resourceType: 'Encounter',
          status: 'finished',
          class: { system: 'http://terminology.hl7.org/CodeSystem/v3-ActCode', code: 'AMB' },
          subject: { reference: patient },
        },
        { method: 'POST', url: 'Encounter', ...ifNoneExist(`${marker}-e`) },
        `${marker}-e`,
      ),
      ...observations.map((o) => o.entry),
      entry(
        `urn:uuid:${randomUUID()}`,
        {
          resourceType: 'DiagnosticReport',
          status: 'final',
          code,
          subject: { reference: patient },
          encounter: { reference: encounter },
          result: observations.map((o) => ({ reference: o.reference })),
        },
        { method: 'POST', url: 'DiagnosticReport' },
      ),
    ],
  };
}

type Counts = Record<(typeof TYPES)[number], number>;

function zeroCounts(): Counts {
  return { Patient: 0, Encounter: 0, Observation: 0, DiagnosticReport: 0 };
}

/**
 * How many resources of each type every marker has in the store: from a search without criteria
 * (the resource rows), checked against a search by identifier (the index rows), which must find
 * the very same resources.
 */
async function storedCounts(url: string, accessToken: string): Promise<Map<string, Counts>> {
  const count = async (criteria: string) => {
    const counts = new Map<string, Counts>();
    for (const type of TYPES) {
      const response = await fetch(
        `${url}/fhir/R4/${type}?${criteria}_count=1000&_elements=identifier`,
        { headers: { Authorization: `Bearer ${accessToken}` } },
      );
      expect(response.status).toBe(200);
      const bundle = (await response.json()) as {
        total: number;
        entry?: { resource: { identifier?: { system: string; value: string }[] } }[];
      };
      expect(bundle.entry?.length ?? 0).toBe(bundle.total);
      for (const { resource } of bundle.entry ?? []) {
        const marker = resource.identifier?.find((i) => i.system === SYSTEM)?.value;
        if (marker === undefined) continue;
        const forMarker = counts.get(marker) ?? zeroCounts();
        forMarker[type]++;
        counts.set(marker, forMarker);
      }
    }
    return counts;
  };
  const stored = await count('');
  expect(await count(`identifier=${encodeURIComponent(`${SYSTEM}|`)}&`)).toEqual(stored);
  return stored;
}

/** Every stored DiagnosticReport points at its own Bundle's Patient, Encounter and Observations. */
async function expectReferencesWithinBundles(url: string, accessToken: string): Promise<void> {
  const response = await fetch(`${url}/fhir/R4/$graphql`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({
      query: `{ DiagnosticReportList(identifier: "${SYSTEM}|", _count: 1000) {
        identifier { value }
        subject { resource { ... on Patient { identifier { value } } } }
        encounter { resource { ... on Encounter { identifier { value } } } }
        result { resource { ... on Observation { identifier { value } } } }
      } }`,
    }),
  });
  const { data, errors } = (await response.json()) as {
    data: {
      DiagnosticReportList: {
        identifier: { value: string }[];
        subject: { resource: { identifier: { value: string }[] } };
        encounter: { resource: { identifier: { value: string }[] } };
        result: { resource: { identifier: { value: string }[] } }[];
      }[];
    };
    errors?: unknown[];
  };
  expect(errors, JSON.stringify(errors)?.slice(0, 1000)).toBeUndefined();
  for (const report of data.DiagnosticReportList) {
    const marker = report.identifier[0].value;
    expect(report.subject.resource.identifier[0].value).toBe(marker);
    expect(report.encounter.resource.identifier[0].value).toBe(marker);
    expect(report.result.map((r) => r.resource.identifier[0].value)).toEqual(
      Array(OBSERVATIONS).fill(marker),
    );
  }
}

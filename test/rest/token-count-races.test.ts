/**
 * The kept token counts (migrations/014) stay equal to `count(DISTINCT id)` of the index rows
 * they stand for, key by key, after a random sequence of writes of every kind with foldings in
 * between (so that a write path that forgot its deltas fails here), and after writes and foldings
 * that race: on one server, and on PostgreSQL from two servers on one database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import {
  serversSharingOneDatabase,
  startTestServer,
  type FhirResponse,
  type FhirSend,
  type RequestInit,
  type TestServer,
} from '../support/test-server.js';
import { tokenCountsAndTruth } from '../support/token-count-truth.js';

const engines = await availableEngines();
const SEED = Number(process.env.TOKEN_COUNT_SEED ?? Date.now() % 1_000_000);
const STEPS = 60;

/** mulberry32: a small seeded generator, so that a failing sequence can be run again. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Observations drawn from few values, so that they share keys, repeat codings, and mix systems. */
function randomObservation(random: () => number, id?: string) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const codings = Array.from({ length: Math.floor(random() * 4) }, () => {
    const system = pick(['http://loinc.org', 'urn:local', null]);
    const code = pick(['a', 'b', 'c']);
    return system === null ? { code } : { system, code };
  });
  return {
    resourceType: 'Observation',
    ...(id === undefined ? {} : { id }),
    status: pick(['final', 'preliminary', 'amended']),
    code: codings.length > 0 ? { coding: codings } : { text: 'none' },
    ...(random() < 0.5 ? { identifier: [{ system: 'urn:obs', value: pick(['x', 'y']) }] } : {}),
  };
}

async function expectExact(server: TestServer, label: string): Promise<void> {
  const { kept, counted } = await tokenCountsAndTruth(server.db);
  expect(kept, label).toEqual(counted);
}

describe.each(engines)('kept token counts after random writes on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  it(`equal the index rows' counts, key by key (TOKEN_COUNT_SEED=${SEED})`, async () => {
    const random = generator(SEED);
    const ids: string[] = [];
    const some = () => ids[Math.floor(random() * ids.length)];
    const send = async (path: string, init: RequestInit) => {
      const response = await server.fhir(path, init);
      if (response.status >= 300)
        throw new Error(`${init.method} ${path}: ${response.status} ${await response.text()}`);
      return response.status === 204 ? undefined : response.json();
    };
    for (let step = 0; step < STEPS; step++) {
      const roll = random();
      if (ids.length === 0 || roll < 0.3) {
        ids.push(
          (await send('/Observation', { method: 'POST', body: randomObservation(random) })).id,
        );
      } else if (roll < 0.5) {
        const id = some();
        await send(`/Observation/${id}`, { method: 'PUT', body: randomObservation(random, id) });
      } else if (roll < 0.6) {
        await send(`/Observation/${some()}`, { method: 'DELETE' });
      } else if (roll < 0.7) {
        await send(`/Observation/${some()}`, {
          method: 'PATCH',
          body: JSON.stringify([{ op: 'replace', path: '/status', value: 'cancelled' }]),
          headers: { 'Content-Type': 'application/json-patch+json' },
        }).catch(() => undefined); // a deleted one answers 410
      } else if (roll < 0.8) {
        await send('/Observation', {
          method: 'POST',
          body: randomObservation(random),
          headers: { 'If-None-Exist': `identifier=urn:obs|${random() < 0.5 ? 'x' : 'y'}` },
        }).catch(() => undefined); // several match: 412
      } else if (roll < 0.95) {
        const targets = [...new Set([some(), some(), some()])];
        const entry = [
          ...Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({
            resource: randomObservation(random),
            request: { method: 'POST', url: 'Observation' },
          })),
          ...targets.map((id) =>
            random() < 0.7
              ? {
                  resource: randomObservation(random, id),
                  request: { method: 'PUT', url: `Observation/${id}` },
                }
              : { request: { method: 'DELETE', url: `Observation/${id}` } },
          ),
        ];
        const bundle = await send('/', {
          method: 'POST',
          body: { resourceType: 'Bundle', type: 'transaction', entry },
        });
        for (const answer of bundle.entry)
          if (answer.response.status.startsWith('201'))
            ids.push(answer.response.location.split('/')[1]);
      } else {
        await server.store.tokenCounts.fold(server.project.projectId);
      }
    }
    await expectExact(server, `TOKEN_COUNT_SEED=${SEED}`);
    // And what a search answers, for each value in any system.
    for (const value of ['a', 'b', 'c']) {
      const search = await send(`/Observation?code=${value}&_count=1000`, {});
      expect(search.total).toBe(search.entry?.length ?? 0);
    }
  });
});

/** Writes of shared values from `senders` at once: creates, updates of one resource, deletes. */
async function writeAtOnce(senders: readonly FhirSend[], ids: readonly string[], round: number) {
  const observation = (id?: string) => ({
    resourceType: 'Observation',
    ...(id === undefined ? {} : { id }),
    status: 'final',
    code: { coding: [{ system: 'http://loinc.org', code: `race-${round % 2}` }, { code: 'race' }] },
  });
  const writes: Promise<FhirResponse>[] = [];
  for (let i = 0; i < 12; i++) {
    const send = senders[i % senders.length];
    if (i % 3 === 0) writes.push(send('/Observation', { method: 'POST', body: observation() }));
    else if (i % 3 === 1)
      writes.push(send(`/Observation/${ids[0]}`, { method: 'PUT', body: observation(ids[0]) }));
    else writes.push(send(`/Observation/${ids[i]}`, { method: 'DELETE' }));
  }
  // Two PUTs creating one new id: one creates it; the other fails (and rolls back) or updates it.
  const fresh = `race-new-${round}`;
  const creating = [senders[0], senders[senders.length - 1]].map((send) =>
    send(`/Observation/${fresh}`, { method: 'PUT', body: observation(fresh) }),
  );
  const statuses = (await Promise.all(writes)).map((response) => response.status);
  expect(
    statuses.every((status) => status === 200 || status === 201),
    `${statuses}`,
  ).toBe(true);
  const created = (await Promise.all(creating)).map((response) => response.status);
  expect(created).toContain(201);
}

async function createSome(send: FhirSend, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await send('/Observation', {
      method: 'POST',
      body: { resourceType: 'Observation', status: 'final', code: { coding: [{ code: 'race' }] } },
    });
    ids.push((await response.json()).id);
  }
  return ids;
}

describe.each(engines)('kept token counts under racing writes on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  it('stay exact with writes and foldings at once', async () => {
    const { projectId } = server.project;
    for (let round = 0; round < 4; round++) {
      const ids = await createSome(server.fhir, 12);
      await Promise.all([
        writeAtOnce([server.fhir], ids, round),
        server.store.tokenCounts.fold(projectId),
        server.store.tokenCounts.fold(projectId),
      ]);
      await expectExact(server, `round ${round}`);
    }
  });
});

describe.runIf(engines.includes('postgres'))('kept token counts written from two servers', () => {
  const servers = serversSharingOneDatabase();

  it('stay exact with both servers writing the same values and folding them at once', async () => {
    const { projectId } = servers.first.project;
    for (let round = 0; round < 4; round++) {
      const ids = await createSome(servers.second.fhir, 12);
      await Promise.all([
        writeAtOnce([servers.first.fhir, servers.second.fhir], ids, round),
        servers.first.store.tokenCounts.fold(projectId),
        servers.second.store.tokenCounts.fold(projectId),
      ]);
      await expectExact(servers.first, `round ${round}`);
    }
    const total = await (await servers.second.fhir('/Observation?code=race&_count=0')).json();
    const all = await (
      await servers.first.fhir('/Observation?code=race&code:not=x&_count=0')
    ).json();
    expect(total.total).toBe(all.total);
  });
});

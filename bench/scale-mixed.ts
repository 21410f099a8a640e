/**
 * The mixed load of `npm run bench:scale` (SCALE_MIXED_SECONDS): after the Q-suite, clients send
 * for a fixed time to the big project, three requests in four one of the Q-suite's queries and
 * one in four a write (a new patient's record as a transaction Bundle, or a Patient read and
 * updated), while the server's memory is read every minute: issue 31 asks that a process's
 * memory stay bounded by its caches' sizes however long it serves.
 */
import { BIG_PROJECT, recordEntries } from './scale-dataset.js';
import type { LoadTarget } from './scale-load.js';
import { SCALE_QUERIES, type ScaleIds, type ScaleRequest } from './scale-queries.js';

/** Clients at once. */
const CLIENTS = 8;
/** Patients of the mixed load's Bundles: far past any loaded step's. */
const FIRST_NEW_PATIENT = 50_000_000;

export interface MixedLoadOptions {
  readonly target: LoadTarget;
  readonly ids: ScaleIds;
  readonly seconds: number;
  /** Sends one Q-suite request; throws on an error answer. */
  readonly send: (request: ScaleRequest) => Promise<void>;
  /** Called about once a minute, and at the end, with the requests answered so far. */
  readonly report: (elapsedSeconds: number, requests: number) => Promise<void>;
}

export async function mixedLoad(options: MixedLoadOptions): Promise<void> {
  const { seconds, report } = options;
  const queries = Object.values(SCALE_QUERIES);
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  let requests = 0;
  let newPatient = FIRST_NEW_PATIENT;
  const client = async (clientIndex: number) => {
    for (let i = clientIndex; elapsed() < seconds; i += CLIENTS) {
      if (i % 4 !== 3) await options.send(queries[i % queries.length](options.ids, i));
      else if (i % 8 === 3) await postRecord(options.target, newPatient++);
      else
        await updatePatient(options.target, options.ids.patients[i % options.ids.patients.length]);
      requests++;
    }
  };
  const clients = Promise.all(Array.from({ length: CLIENTS }, (_, k) => client(k)));
  let nextReport = 60;
  let lastReported = 0;
  const reporting = (async () => {
    for (;;) {
      const done = await Promise.race([
        clients.then(() => true),
        new Promise<false>((resolve) =>
          setTimeout(() => resolve(false), Math.max(0, nextReport - elapsed()) * 1000),
        ),
      ]);
      if (done) return;
      lastReported = elapsed();
      await report(lastReported, requests);
      nextReport += 60;
    }
  })();
  await clients;
  await reporting;
  // The last minute's report may have come as the clients finished.
  if (elapsed() - lastReported > 1) await report(elapsed(), requests);
}

async function postRecord(target: LoadTarget, patient: number): Promise<void> {
  const bundle = { resourceType: 'Bundle', type: 'transaction', entry: recordEntries(patient) };
  await expectOk(
    await fetch(`${target.url}/fhir/R4/`, {
      method: 'POST',
      headers: headers(target, 'application/fhir+json'),
      body: JSON.stringify(bundle),
    }),
  );
}

/** Reads the Patient and writes it back with one more telecom entry (at most three kept). */
async function updatePatient(target: LoadTarget, id: string): Promise<void> {
  const url = `${target.url}/fhir/R4/Patient/${id}`;
  const read = await fetch(url, { headers: headers(target) });
  await expectOk(read, false);
  const patient = (await read.json()) as { telecom?: unknown[] };
  const telecom = [
    ...(patient.telecom ?? []).slice(-2),
    { system: 'phone', value: `${Date.now()}` },
  ];
  await expectOk(
    await fetch(url, {
      method: 'PUT',
      headers: headers(target, 'application/fhir+json'),
      body: JSON.stringify({ ...patient, telecom }),
    }),
  );
}

function headers(target: LoadTarget, contentType?: string): Record<string, string> {
  return {
    Authorization: `Bearer ${target.tokens[BIG_PROJECT]}`,
    ...(contentType ? { 'Content-Type': contentType } : {}),
  };
}

/** Throws on an error answer; reads the body unless the caller will. */
async function expectOk(response: Response, consume = true): Promise<void> {
  if (!response.ok)
    throw new Error(`${response.url} → ${response.status}: ${await response.text()}`);
  if (consume) await response.arrayBuffer();
}

/**
 * npm run bench:rest — loads the synthetic data set (1,000 patients, 12,000 resources) through
 * ~500-entry transaction Bundles over HTTP, on PGlite and on PostgreSQL, and prints resources
 * per second; then p50/p99 of searches by name, address-city, token and date.
 * PostgreSQL: BENCH_DATABASE_URL or the local server (skipped when none answers).
 */
import { availableEngines } from '../test/support/test-databases.js';
import { startTestServer } from '../test/support/test-server.js';
import { openBenchDatabase } from './bench-database.js';
import { percentile } from './measure.js';
import { transactionBundles } from './synthetic-dataset.js';

const PATIENTS = Number(process.env.BENCH_PATIENTS ?? 1000);
const BUNDLE_SIZE = Number(process.env.BENCH_BUNDLE_SIZE ?? 500);
const SEARCHES = Number(process.env.BENCH_SEARCHES ?? 200);

const SEARCH_QUERIES: Record<string, (i: number) => string> = {
  'name (string)': (i) => `Patient?name=${['smi', 'garc', 'mül', 'chal', 'okaf', 'jones'][i % 6]}`,
  'address-city (string)': (i) => `Patient?address-city=${['Boston', 'Austin', 'Denver'][i % 3]}`,
  'identifier (token)': (i) =>
    `Patient?identifier=urn:graphir:bench:mrn|MRN${String(i % PATIENTS).padStart(6, '0')}`,
  'birthdate (date)': (i) =>
    `Patient?birthdate=ge${1940 + (i % 60)}-01-01&birthdate=lt${1941 + (i % 60)}-01-01`,
  'code (token), _count=10': () => 'Observation?code=http://loinc.org|29463-7&_count=10',
};

for (const engine of await availableEngines()) {
  const server = await startTestServer(engine, {}, await openBenchDatabase(engine));
  const { base } = server;
  const headers = {
    'Content-Type': 'application/fhir+json',
    Authorization: `Bearer ${server.project.token}`,
  };
  try {
    const started = performance.now();
    let loaded = 0;
    for (const bundle of transactionBundles(PATIENTS, BUNDLE_SIZE)) {
      const response = await fetch(base, {
        method: 'POST',
        headers,
        body: JSON.stringify(bundle),
      });
      if (response.status !== 200)
        throw new Error(`transaction failed: ${response.status} ${await response.text()}`);
      loaded += bundle.entry.length;
    }
    const seconds = (performance.now() - started) / 1000;
    await server.store.statistics.settled();
    console.log(
      `${engine}: loaded ${loaded} resources in ${seconds.toFixed(1)} s = ${Math.round(loaded / seconds)} resources/s (${BUNDLE_SIZE}-entry transactions)`,
    );
    for (const [name, query] of Object.entries(SEARCH_QUERIES)) {
      const times: number[] = [];
      for (let i = 0; i < SEARCHES; i++) {
        const t0 = performance.now();
        const response = await fetch(`${base}/${query(i)}`, { headers });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`search failed: ${response.status}`);
        times.push(performance.now() - t0);
      }
      console.log(
        `${engine}:   search ${name.padEnd(28)} p50 ${percentile(times, 50).toFixed(2)} ms  p99 ${percentile(times, 99).toFixed(2)} ms`,
      );
    }
  } finally {
    await server.stop();
  }
}
console.log(
  'Medplum, same data set and kind of machine: 87 resources/s through transaction Bundles.',
);

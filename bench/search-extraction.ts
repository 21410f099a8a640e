/**
 * npm run bench:extraction — what extracting a resource's search index costs at write time,
 * without any database: each resource type of the synthetic data set (bench/synthetic-dataset.ts)
 * run through extractSearchIndex, medians of many runs after a warm-up.
 */
import { loadSearchDefinition } from '../generated/search/index.js';
import { extractSearchIndex } from '../runtime/search/extract-search-index.js';
import { patientEntries } from './synthetic-dataset.js';

const WARMUP = 2_000;
const RUNS = 5_000;

const byType = new Map(patientEntries(0).map(({ resource }) => [resource.resourceType, resource]));
for (const [resourceType, resource] of byType) {
  const definition = loadSearchDefinition(resourceType);
  for (let i = 0; i < WARMUP; i++) extractSearchIndex(resource, definition);
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    extractSearchIndex(resource, definition);
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  times.sort((a, b) => a - b);
  console.log(
    `extractSearchIndex ${resourceType}: median ${times[RUNS >> 1].toFixed(1)} µs, p90 ${times[Math.floor(RUNS * 0.9)].toFixed(1)} µs`,
  );
}

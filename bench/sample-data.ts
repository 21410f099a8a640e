/**
 * Prints the sample data set as one transaction Bundle (default 10 patients with their
 * Encounters, DiagnosticReports and Observations): `npx tsx bench/sample-data.ts 10 > sample.json`.
 */
import { transactionBundles } from './synthetic-dataset.js';

const patients = Number(process.argv[2] ?? 10);
for (const bundle of transactionBundles(patients, Number.MAX_SAFE_INTEGER))
  process.stdout.write(JSON.stringify(bundle));

/**
 * npm run probe [-- --root <checkout>] [-- --only <family>] — the attacks the reliability tests try in brief, at full
 * size, against servers run as `npm start` runs them (each in its own process, built first), and
 * what they did to the server: its heap, how long it stalled, how long another tenant waited, how
 * many requests a revoked token still got through, how many resources racing conditional creates
 * made. `--root` runs another checkout's build (an older version, for before/after figures).
 *
 * Families: oversized and repeated GraphQL queries; expensive FHIRPath; one project flooding the
 * bot pool; tokens with made-up key ids; on PostgreSQL with two server processes, revocation
 * across processes and racing conditional creates; and those of bench/probes-hardening.ts
 * (backtracking patterns, JSON Patch growth, slow endpoints, twin conditional entries).
 */
import { SignJWT, decodeJwt, generateKeyPair } from 'jose';
import { availableEngines, createTestDatabase } from '../test/support/test-databases.js';
import { buildOnce, clientToken } from './bench-server.js';
import {
  checkout,
  fhir,
  graphql,
  heapMb,
  json,
  median,
  sleep,
  stallDuring,
  start,
  type Tenant,
} from './probe-server.js';
import {
  conditionalTwins,
  jsonPatchCopies,
  jsonPatchPaths,
  slowEndpoints,
  subscriptionHeaders,
} from './probes-hardening.js';

async function oversizedQueries(): Promise<void> {
  const server = await start();
  try {
    const { token } = await server.project('Probe');
    // 190,000 fields (a field selected again merges with itself), 2.1 MB: valid, and far over
    // the cost limit. A comment makes each text distinct.
    const fields = '__typename '.repeat(190_000);
    const before = await heapMb(server);
    const statuses = new Map<string, number>();
    let sent = 0;
    const stall = await stallDuring(server, async () => {
      for (; sent < 100; sent++) {
        const query = `# ${sent}\n{ ${fields}}`;
        const status = await graphql(server, token, query).then(
          (r) => String(r.status),
          (error: Error) => `failed (${error.message})`,
        );
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status.startsWith('failed')) break;
      }
    });
    const alive = await fetch(`${server.url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    const after = alive ? await heapMb(server) : NaN;
    console.log(
      `oversized queries: ${sent} queries of 2.1 MB of fields → ${[...statuses].map(([s, n]) => `${n}× ${s}`).join(', ')}; ` +
        `heap ${before.toFixed(0)} → ${after.toFixed(0)} MB; /healthz slowest ${stall.toFixed(0)} ms; server ${alive ? 'alive' : 'dead'}`,
    );
  } finally {
    await server.stop();
  }
}

async function expensiveFhirPath(): Promise<void> {
  const server = await start();
  try {
    const { token } = await server.project('Probe');
    const entry = Array.from({ length: 300 }, (_, i) => ({
      resource: { resourceType: 'Patient', name: [{ family: `F${i}`, given: ['A', 'B'] }] },
      request: { method: 'POST', url: 'Patient' },
    }));
    await json(
      await fhir(server, token, '', {
        method: 'POST',
        body: JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry }),
      }),
    );
    const or = (n: number, salt: string, subject: string) =>
      Array.from({ length: n }, (_, i) => `${subject} = '${salt}${i}'`).join(' or ');
    const attacks = {
      '150 clauses over 300 Patients': `{ PatientList(_count: 300) { name(fhirpath: "${or(150, 'x', 'family')}") { family } } }`,
      'a 140-clause where() over 200 Patients': `{ PatientList(_count: 200) { name(fhirpath: "given.where(${or(140, 'y', '$this')}).exists()") { family } } }`,
    };
    for (const [name, query] of Object.entries(attacks)) {
      let status = 0;
      const stall = await stallDuring(server, async () => {
        status = (await graphql(server, token, query)).status;
      });
      console.log(
        `expensive FHIRPath, ${name}: ${status}; /healthz slowest ${stall.toFixed(0)} ms`,
      );
    }
  } finally {
    await server.stop();
  }
}

async function botFlood(): Promise<void> {
  const server = await start();
  try {
    const flooder = await server.project('Flooder');
    const other = await server.project('Other');
    const bot = async (tenant: Tenant, code: string) =>
      (
        await json(
          await fhir(server, tenant.token, '/Bot', {
            method: 'POST',
            body: JSON.stringify({ resourceType: 'Bot', code, timeout: 2 }),
          }),
        )
      ).id as string;
    const loop = await bot(flooder, 'export async function handler() { for (;;) {} }');
    const echo = await bot(
      other,
      'export async function handler(fhir, event) { return event.input; }',
    );
    const run = async (tenant: Tenant, id: string) => {
      const started = performance.now();
      const response = await fhir(server, tenant.token, `/Bot/${id}/$execute`, {
        method: 'POST',
        body: 'x',
        headers: { 'Content-Type': 'text/plain' },
      });
      await response.text();
      return { ms: performance.now() - started, status: response.status };
    };
    const alone: number[] = [];
    for (let i = 0; i < 30; i++) alone.push((await run(other, echo)).ms);
    const floods = Array.from({ length: 10 }, () => run(flooder, loop));
    await sleep(300);
    const during: number[] = [];
    for (let i = 0; i < 10; i++) during.push((await run(other, echo)).ms);
    const flooded = await Promise.all(floods);
    const statuses = new Map<number, number>();
    for (const { status } of flooded) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    console.log(
      `bot flood: 10 loops of 2 s from one project (${[...statuses].map(([s, n]) => `${n}× ${s}`).join(', ')}); ` +
        `another project's echo alone ${median(alone).toFixed(1)} ms, during the flood first ${during[0].toFixed(0)} ms, median ${median(during).toFixed(1)} ms`,
    );
  } finally {
    await server.stop();
  }
}

async function madeUpKids(): Promise<void> {
  const server = await start();
  try {
    const { token } = await server.project('Probe');
    const claims = decodeJwt(token);
    const { privateKey } = await generateKeyPair('ES256');
    const header = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString());
    const timed = async (kid: (i: number) => string) => {
      const tokens = await Promise.all(
        Array.from({ length: 2000 }, (_, i) =>
          new SignJWT(claims)
            .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: kid(i) })
            .sign(privateKey),
        ),
      );
      const started = performance.now();
      for (let i = 0; i < tokens.length; i += 8)
        await Promise.all(
          tokens.slice(i, i + 8).map((t) => fhir(server, t, '/Patient').then((r) => r.text())),
        );
      return (performance.now() - started) / 1000;
    };
    const unknown = await timed((i) => `made-up-${i}`);
    const badSignature = await timed(() => header.kid);
    console.log(
      `made-up key ids: 2,000 requests in ${unknown.toFixed(1)} s; with the real kid and a bad signature ${badSignature.toFixed(1)} s`,
    );
  } finally {
    await server.stop();
  }
}

async function acrossProcesses(): Promise<void> {
  if (!(await availableEngines()).includes('postgres')) return;
  const database = await createTestDatabase('postgres');
  const a = await start({ DATABASE_URL: database.url! });
  // One public address, as a load balancer gives processes sharing a database: a's URL is b's
  // GRAPHIR_BASE_URL, so each accepts the other's tokens (their audience).
  const b = await start({ DATABASE_URL: database.url!, GRAPHIR_BASE_URL: a.url });
  try {
    const tenant = await a.project('Probe');
    // Revocation: a client warmed on B, deleted on A, then used on B for two seconds.
    const client = await json(
      await fetch(`${a.url}/admin/projects/${tenant.projectId}/clients`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${a.root}` },
        body: JSON.stringify({ name: 'doomed', scope: 'system/*.cruds' }),
      }),
    );
    const doomed = await clientToken(a.url, client.clientId, client.clientSecret);
    for (let i = 0; i < 3; i++) await (await fhir(b, doomed, '/Patient')).text();
    await fetch(`${a.url}/admin/projects/${tenant.projectId}/clients/${client.clientId}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${a.root}` },
    });
    const deleted = performance.now();
    let accepted = 0;
    let lastAccepted = 0;
    while (performance.now() - deleted < 2000) {
      const read = await fhir(b, doomed, '/Patient');
      await read.text();
      const create = await fhir(b, doomed, '/Patient', {
        method: 'POST',
        body: JSON.stringify({ resourceType: 'Patient' }),
      });
      await create.text();
      for (const response of [read, create])
        if (response.status < 300) {
          accepted++;
          lastAccepted = performance.now() - deleted;
        }
    }
    console.log(
      `revocation across processes: ${accepted} requests with the deleted client's token accepted by the other process` +
        (accepted ? `, the last ${lastAccepted.toFixed(0)} ms after the delete returned` : ''),
    );
    // Racing conditional creates, split over both processes.
    let duplicated = 0;
    for (let round = 0; round < 20; round++) {
      const identifier = `race-${round}`;
      await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          fhir(i % 2 ? b : a, tenant.token, '/Patient', {
            method: 'POST',
            body: JSON.stringify({
              resourceType: 'Patient',
              identifier: [{ system: 'urn:cc', value: identifier }],
            }),
            headers: { 'If-None-Exist': `identifier=urn:cc|${identifier}` },
          }).then((r) => r.text()),
        ),
      );
      const found = await json(
        await fhir(a, tenant.token, `/Patient?identifier=urn:cc|${identifier}&_summary=count`),
      );
      if (found.total > 1) duplicated++;
    }
    console.log(
      `conditional creates: 20 races of 6 over two processes; ${duplicated} made more than one resource`,
    );
  } finally {
    await a.stop();
    await b.stop();
    await database.drop();
  }
}

if (!checkout) buildOnce();
console.log(`probing ${checkout ?? 'this checkout'}`);
const onlyIndex = process.argv.indexOf('--only');
const only = onlyIndex > 0 ? process.argv[onlyIndex + 1] : undefined;
for (const family of [
  oversizedQueries,
  expensiveFhirPath,
  botFlood,
  madeUpKids,
  acrossProcesses,
  subscriptionHeaders,
  jsonPatchPaths,
  jsonPatchCopies,
  slowEndpoints,
  conditionalTwins,
]) {
  if (only && family.name !== only) continue;
  await family().catch((error: Error) => console.log(`${family.name}: ${error.message}`));
}

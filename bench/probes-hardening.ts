/**
 * The probe families of issue 38, each at full size against a server run as `npm start` runs it:
 * patterns that backtracked (a Subscription header, a JSON Patch path), JSON Patch `copy`
 * doubling a document, one project's endpoints that never answer, and one transaction naming one
 * conditional resource twice. Each prints what the server answered, how long `/healthz` stalled
 * and, where it matters, the heap or how long another tenant waited.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fhir, heapMb, json, sleep, stallDuring, start, type Server } from './probe-server.js';

/** Slower than this, an answer is reported as none: the older versions took minutes or hours. */
const ANSWER_WAIT_MS = 60_000;

/** `status` of a request, or what kept it from having one, and how long it took. */
async function timed(request: () => Promise<Response>): Promise<{ status: string; ms: number }> {
  const started = performance.now();
  const status = await request().then(
    async (response) => {
      await response.text();
      return String(response.status);
    },
    (error: Error) =>
      error.name === 'TimeoutError'
        ? `no answer in ${ANSWER_WAIT_MS / 1000} s`
        : `failed (${error.message})`,
  );
  return { status, ms: performance.now() - started };
}

/** The attack, timed, with the longest `/healthz` took while it ran. */
async function attackOnce(
  server: Server,
  request: () => Promise<Response>,
): Promise<{ status: string; ms: number; stall: number }> {
  let answer = { status: '', ms: 0 };
  const stall = await stallDuring(server, async () => {
    answer = await timed(request);
  });
  return { ...answer, stall };
}

const alive = (server: Server) =>
  fetch(`${server.url}/healthz`).then(
    (response) => response.ok,
    () => false,
  );

export async function subscriptionHeaders(): Promise<void> {
  const server = await start();
  try {
    const { token } = await server.project('Probe');
    for (const spaces of [200, 2_000, 20_000]) {
      const { status, ms, stall } = await attackOnce(server, () =>
        fhir(server, token, '/Subscription', {
          method: 'POST',
          body: JSON.stringify({
            resourceType: 'Subscription',
            status: 'requested',
            reason: 'probe',
            criteria: 'Patient',
            channel: {
              type: 'rest-hook',
              endpoint: 'https://example.org/hook',
              header: [`X-A:${' '.repeat(spaces)}\n`],
            },
          }),
          signal: AbortSignal.timeout(ANSWER_WAIT_MS),
        }),
      );
      console.log(
        `subscription header of ${spaces.toLocaleString('en')} spaces: ${status} in ${ms.toFixed(0)} ms; /healthz slowest ${stall.toFixed(0)} ms`,
      );
      if (!status.match(/^\d/)) break;
    }
  } finally {
    await server.stop();
  }
}

async function patientWith(server: Server, token: string, resource: object): Promise<string> {
  const created = await json(
    await fhir(server, token, '/Patient', {
      method: 'POST',
      body: JSON.stringify({ resourceType: 'Patient', ...resource }),
    }),
  );
  return created.id as string;
}

const patch = (server: Server, token: string, id: string, operations: object[]) =>
  fhir(server, token, `/Patient/${id}`, {
    method: 'PATCH',
    body: JSON.stringify(operations),
    headers: { 'Content-Type': 'application/json-patch+json' },
    signal: AbortSignal.timeout(ANSWER_WAIT_MS),
  });

export async function jsonPatchPaths(): Promise<void> {
  const server = await start();
  try {
    const { token } = await server.project('Probe');
    const id = await patientWith(server, token, {});
    for (const slashes of [24, 28, 32, 1_000]) {
      const path = `${'/'.repeat(slashes)}~`;
      const { status, ms, stall } = await attackOnce(server, () =>
        patch(server, token, id, [{ op: 'test', path, value: 1 }]),
      );
      console.log(
        `JSON Patch path of ${slashes} slashes and a "~": ${status} in ${ms.toFixed(0)} ms; /healthz slowest ${stall.toFixed(0)} ms`,
      );
      if (!status.match(/^\d/)) break;
    }
  } finally {
    await server.stop();
  }
}

export async function jsonPatchCopies(): Promise<void> {
  const server = await start();
  try {
    const { token } = await server.project('Probe');
    const id = await patientWith(server, token, {
      extension: [{ url: 'urn:probe', valueString: 'x' }],
    });
    const copies = (n: number) =>
      Array.from({ length: n }, () => ({ op: 'copy', from: '/extension', path: '/extension/-' }));
    const before = await heapMb(server);
    for (const n of [21, 30]) {
      const { status, ms, stall } = await attackOnce(server, () =>
        patch(server, token, id, copies(n)),
      );
      const up = await alive(server);
      console.log(
        `JSON Patch of ${n} copies (${JSON.stringify(copies(n)).length.toLocaleString('en')} bytes): ${status} in ${ms.toFixed(0)} ms; ` +
          `/healthz slowest ${stall.toFixed(0)} ms; heap ${before.toFixed(0)} → ${up ? (await heapMb(server)).toFixed(0) : '-'} MB; server ${up ? 'alive' : 'dead'}`,
      );
      if (!up) return;
    }
    const statuses = new Map<string, number>();
    const started = performance.now();
    for (let i = 0; i < 100; i++) {
      const { status } = await timed(() => patch(server, token, id, copies(40)));
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (!status.match(/^\d/)) break;
    }
    const up = await alive(server);
    console.log(
      `JSON Patch: 100 patches of 40 copies → ${[...statuses].map(([s, n]) => `${n}× ${s}`).join(', ')} in ${((performance.now() - started) / 1000).toFixed(1)} s; ` +
        `heap ${before.toFixed(0)} → ${up ? (await heapMb(server)).toFixed(0) : '-'} MB; server ${up ? 'alive' : 'dead'}`,
    );
  } finally {
    await server.stop();
  }
}

/** A loopback endpoint: `/hang` accepts and never answers, `/fast` answers at once. */
async function endpoints(): Promise<{ url: string; fast: number[]; close(): Promise<void> }> {
  const fast: number[] = [];
  const server: HttpServer = createServer((request, response) => {
    request.resume();
    if (request.url?.startsWith('/fast')) {
      fast.push(performance.now());
      response.end('ok');
    }
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    fast,
    close: () =>
      new Promise((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

export async function slowEndpoints(): Promise<void> {
  const hooks = await endpoints();
  const server = await start({ GRAPHIR_EGRESS_ALLOW: '127.0.0.1' });
  try {
    const x = await server.project('Slow');
    const y = await server.project('Other');
    const subscribe = (token: string, endpoint: string) =>
      fhir(server, token, '/Subscription', {
        method: 'POST',
        body: JSON.stringify({
          resourceType: 'Subscription',
          status: 'requested',
          reason: 'probe',
          criteria: 'Patient',
          channel: { type: 'rest-hook', endpoint, payload: 'application/fhir+json' },
        }),
      });
    await json(await subscribe(x.token, `${hooks.url}/hang`));
    await json(await subscribe(y.token, `${hooks.url}/fast`));
    await Promise.all(Array.from({ length: 16 }, () => patientWith(server, x.token, {})));
    await sleep(500);
    const written = performance.now();
    await patientWith(server, y.token, {});
    while (hooks.fast.length === 0 && performance.now() - written < 120_000) await sleep(20);
    console.log(
      `slow endpoints: 16 deliveries of one project hanging; another project's delivery ` +
        (hooks.fast.length
          ? `arrived ${(hooks.fast[0] - written).toFixed(0)} ms after its write`
          : 'had not arrived 120 s after its write'),
    );
  } finally {
    await server.stop();
    await hooks.close();
  }
}

export async function conditionalTwins(): Promise<void> {
  const server = await start();
  try {
    const { token } = await server.project('Probe');
    // Each pair names one identifier value of its own, which nothing matches yet.
    const pairs: [string, string, object[]][] = [
      [
        'two PUT ?identifier',
        'A',
        [
          { request: { method: 'PUT', url: 'Patient?identifier=urn:e3|A' } },
          { request: { method: 'PUT', url: 'Patient?identifier=urn:e3|A' } },
        ],
      ],
      [
        'POST ifNoneExist, then PUT ?identifier',
        'B',
        [
          { request: { method: 'POST', url: 'Patient', ifNoneExist: 'identifier=urn:e3|B' } },
          { request: { method: 'PUT', url: 'Patient?identifier=urn:e3|B' } },
        ],
      ],
    ];
    for (const [name, value, requests] of pairs) {
      const entry = requests.map((e) => ({
        ...e,
        resource: { resourceType: 'Patient', identifier: [{ system: 'urn:e3', value }] },
      }));
      const response = await fhir(server, token, '', {
        method: 'POST',
        body: JSON.stringify({ resourceType: 'Bundle', type: 'transaction', entry }),
      });
      await response.text();
      const found = await json(
        await fhir(server, token, `/Patient?identifier=urn:e3|${value}&_summary=count`),
      );
      console.log(
        `one transaction, ${name}: ${response.status}; ${found.total} Patient(s) with that identifier`,
      );
    }
  } finally {
    await server.stop();
  }
}

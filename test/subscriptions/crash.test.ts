/**
 * Deliveries across real server processes: kill -9 while a rest-hook delivery waits for its
 * endpoint, then a restart, on each engine → the delivery is made again (once per attempt) and
 * the Subscription stays active; two processes on one PostgreSQL database → every write sent to
 * either is delivered, none twice at once, each resource's versions in order; and when one
 * process is killed mid-way the other delivers what it left.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  availableEngines,
  createTestDatabase,
  type TestDatabase,
} from '../support/test-databases.js';
import {
  createProject,
  processStorage,
  startServerProcess,
  token,
  type ProcessStorage,
  type ServerProcess,
} from '../reliability/server-process.js';
import { startHookServer, type HookServer, type Received } from './hook-server.js';

const engines = await availableEngines();
/** Both processes take tokens for this address, as processes behind one load balancer. */
const PUBLIC_URL = 'http://graphir.test';

/** FHIR calls to one process with a bearer token; answers parsed, failures thrown. */
function client(server: ServerProcess, bearer: string) {
  return async (method: string, path: string, body?: object): Promise<any> => {
    const response = await fetch(`${server.url}/fhir/R4${path}`, {
      method,
      headers: { Authorization: bearer, 'Content-Type': 'application/fhir+json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = await response.json();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${JSON.stringify(json)}`);
    return json;
  };
}

const subscription = (endpoint: string) => ({
  resourceType: 'Subscription',
  status: 'requested',
  reason: 'test',
  criteria: 'Patient?family=Crash',
  channel: { type: 'rest-hook', endpoint, payload: 'application/fhir+json' },
});
const patient = (given: string) => ({
  resourceType: 'Patient',
  name: [{ family: 'Crash', given: [given] }],
});

/** The resource id and version a delivery carried. */
const delivered = (received: Received) => {
  const body = JSON.parse(received.body);
  return `${body.id}@${body.meta.versionId}`;
};

describe.each(engines)('kill -9 during a delivery (%s)', (engine) => {
  let storage: ProcessStorage | undefined;
  let server: ServerProcess | undefined;
  let hooks: HookServer | undefined;
  afterAll(async () => {
    await server?.kill('SIGKILL');
    await storage?.remove();
    await hooks?.close();
  });

  it('delivers again after a restart', async () => {
    hooks = await startHookServer();
    storage = await processStorage(engine);
    const env = {
      ...storage.env,
      GRAPHIR_BASE_URL: PUBLIC_URL,
      GRAPHIR_EGRESS_ALLOW: '127.0.0.1',
      GRAPHIR_JOBS_POLL_INTERVAL_MS: '200',
    };
    server = await startServerProcess(env);
    const project = await createProject(server.url, 'Subscriptions');
    let fhir = client(server, `Bearer ${project.token}`);
    const path = '/delay/3000/crash';
    const { id: subscriptionId } = await fhir(
      'POST',
      '/Subscription',
      subscription(`${hooks.url}${path}`),
    );
    const written = await fhir('POST', '/Patient', patient('killed'));
    // The delivery is under way (its endpoint holds the answer for 3 s): kill the process.
    await hooks.waitFor(path, 1);
    expect(await server.kill('SIGKILL')).toBe('SIGKILL');

    server = await startServerProcess(env);
    fhir = client(
      server,
      `Bearer ${await token(server.url, project.clientId, project.clientSecret)}`,
    );
    const deliveries = await hooks.waitFor(path, 2, 60_000);
    expect(deliveries.map(delivered)).toEqual([`${written.id}@1`, `${written.id}@1`]);
    // Attempt 2 ends well (the endpoint answers after 3 s), audited as such.
    for (let i = 0; ; i++) {
      const bundle = await fhir('GET', `/AuditEvent?entity=Subscription/${subscriptionId}`);
      const events = (bundle.entry ?? []).map((e: any) => e.resource);
      if (events.some((e: any) => e.outcome === '0')) {
        expect(events.find((e: any) => e.outcome === '0').outcomeDesc).toMatch(/^Attempt 2 of/);
        break;
      }
      if (i > 300) throw new Error(`no delivered attempt audited: ${JSON.stringify(events)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await fhir('GET', `/Subscription/${subscriptionId}`)).status).toBe('active');
    expect(hooks.on(path)).toHaveLength(2);
  }, 180_000);
});

describe.runIf(engines.includes('postgres'))(
  'deliveries from two processes on one PostgreSQL database',
  () => {
    let database: TestDatabase | undefined;
    let hooks: HookServer | undefined;
    const servers: ServerProcess[] = [];
    afterAll(async () => {
      for (const server of servers) await server.kill('SIGKILL');
      await database?.drop();
      await hooks?.close();
    });

    it('delivers every write once, in order per resource, and what a killed process left', async () => {
      hooks = await startHookServer({ deliveryKey: (r) => `${r.path} ${delivered(r)}` });
      database = await createTestDatabase('postgres');
      const env = {
        DATABASE_URL: database.url,
        GRAPHIR_BASE_URL: PUBLIC_URL,
        GRAPHIR_EGRESS_ALLOW: '127.0.0.1',
        GRAPHIR_JOBS_POLL_INTERVAL_MS: '200',
        GRAPHIR_JOBS_CONCURRENCY: '4',
      };
      servers.push(await startServerProcess(env), await startServerProcess(env));
      const project = await createProject(servers[0].url, 'Subscriptions');
      const [a, b] = servers.map((server) => client(server, `Bearer ${project.token}`));
      await a('POST', '/Subscription', subscription(`${hooks.url}/two`));

      // 20 patients, each created and updated twice, through both processes in turn.
      const ids = await Promise.all(
        Array.from(
          { length: 20 },
          async (_, n) =>
            (await (n % 2 ? b : a)('POST', '/Patient', patient(`p${n}`))).id as string,
        ),
      );
      for (const version of [2, 3])
        await Promise.all(
          ids.map((id, n) =>
            (n % 2 ? a : b)('PUT', `/Patient/${id}`, { ...patient(`v${version}`), id }),
          ),
        );
      const all = await hooks.waitFor('/two', 60, 60_000);
      const seen = all.map(delivered);
      expect(new Set(seen).size).toBe(60);
      for (const id of ids)
        expect(seen.filter((d) => d.startsWith(`${id}@`))).toEqual([
          `${id}@1`,
          `${id}@2`,
          `${id}@3`,
        ]);
      expect(hooks.maxConcurrent).toBe(1);

      // Slow deliveries; process A is killed while some wait on the endpoint: B delivers them.
      await a('POST', '/Subscription', subscription(`${hooks.url}/delay/1000/slow`));
      const slow = await Promise.all(
        Array.from(
          { length: 10 },
          async (_, n) =>
            (await (n % 2 ? b : a)('POST', '/Patient', patient(`s${n}`))).id as string,
        ),
      );
      await hooks.waitFor('/delay/1000/slow', 2, 60_000);
      await servers[0].kill('SIGKILL');
      await hooks.waitFor('/delay/1000/slow', slow.length, 60_000);
      for (let i = 0; ; i++) {
        const got = new Set(hooks.on('/delay/1000/slow').map(delivered));
        if (slow.every((id) => got.has(`${id}@1`))) break;
        if (i > 600) throw new Error(`not delivered: ${slow.filter((id) => !got.has(`${id}@1`))}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // Only what A was running when killed may have been delivered twice: at most its concurrency.
      const counts = slow.map(
        (id) => hooks!.on('/delay/1000/slow').filter((r) => delivered(r) === `${id}@1`).length,
      );
      expect(counts.filter((count) => count > 1).length).toBeLessThanOrEqual(4);
      expect(hooks.maxConcurrent).toBe(1);
    }, 240_000);
  },
);

/**
 * PostgreSQL goes away under load and comes back, while one Graphir process keeps running: while
 * it is down every request is answered, quickly, with 503 and an OperationOutcome of type
 * `transient` (never 500, never a hang, never a 401 for a token that cannot be checked; a token
 * whose key id is unknown is checked against the keys read in the last ten seconds), /healthz
 * says not ready, and once it is back every kind of request succeeds again within a bound —
 * without restarting Graphir. The cluster is the test's own (private-postgres.ts), taken away
 * three ways: a crash (`pg_ctl stop -m immediate`), a fast shutdown (`-m fast`: clients are told
 * to go away), and a busy backend killed with SIGKILL (its client's socket just closes; the
 * postmaster resets every other connection and recovers).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { SignJWT, generateKeyPair } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  privatePostgresUnavailable,
  startPrivatePostgres,
  type PrivatePostgres,
} from './private-postgres.js';
import { createProject, startServerProcess, type ServerProcess } from './server-process.js';

const unavailable = privatePostgresUnavailable();
/** Concurrent clients sending requests one after another. */
const CLIENTS = 8;
/** A request not answered in this time counts as a hang. */
const REQUEST_TIMEOUT_MS = 5_000;
const HEALTHY_MS = 1_500;
const DOWN_MS = 3_000;
/** Every kind of request must succeed again within this time after the database is back. */
const RECOVERY_BOUND_MS = 10_000;

const KINDS = [
  'read',
  'search',
  'create',
  'transaction',
  'graphql',
  'token',
  'healthz',
  'unknown-key token',
] as const;
type Kind = (typeof KINDS)[number];

interface Outcome {
  readonly kind: Kind;
  readonly started: number;
  readonly ended: number;
  /** HTTP status, or what happened instead of an answer. */
  readonly status: number | 'timeout' | 'no answer';
  readonly healthy: boolean;
  /** 503 with an OperationOutcome whose issue is `transient`. */
  readonly transient: boolean;
  readonly detail: string;
}

describe.skipIf(unavailable)('PostgreSQL restarted under load', () => {
  let postgres: PrivatePostgres;
  let server: ServerProcess;
  let send: (kind: Kind) => Promise<Outcome>;

  beforeAll(async () => {
    postgres = await startPrivatePostgres();
    server = await startServerProcess({
      DATABASE_URL: postgres.url,
      DATABASE_POOL_SIZE: '5',
      LOG_LEVEL: 'warn',
    });
    const project = await createProject(server.url, 'Outage');
    const headers = {
      'Content-Type': 'application/fhir+json',
      Authorization: `Bearer ${project.token}`,
    };
    const seeded = await fetch(`${server.url}/fhir/R4/Patient`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Seed' }] }),
    });
    expect(seeded.status).toBe(201);
    const seedId = ((await seeded.json()) as { id: string }).id;
    // Well formed, but signed by a key the store does not hold: 401 — once the store can say so.
    const { privateKey } = await generateKeyPair('ES256');
    const foreign = await new SignJWT({ scope: 'system/*.cruds' })
      .setProtectedHeader({ alg: 'ES256', kid: randomUUID(), typ: 'JWT' })
      .setIssuer('graphir')
      .setSubject(project.clientId)
      .setExpirationTime('1h')
      .sign(privateKey);

    const requests: Record<Kind, () => { path: string; init: RequestInit; expect: number }> = {
      read: () => ({ path: `/fhir/R4/Patient/${seedId}`, init: { headers }, expect: 200 }),
      search: () => ({
        path: '/fhir/R4/Patient?name=Seed&_count=5',
        init: { headers },
        expect: 200,
      }),
      create: () => ({
        path: '/fhir/R4/Patient',
        init: {
          method: 'POST',
          headers,
          body: JSON.stringify({ resourceType: 'Patient', name: [{ family: 'Load' }] }),
        },
        expect: 201,
      }),
      transaction: () => {
        const patient = `urn:uuid:${randomUUID()}`;
        return {
          path: '/fhir/R4',
          init: {
            method: 'POST',
            headers,
            body: JSON.stringify({
              resourceType: 'Bundle',
              type: 'transaction',
              entry: [
                {
                  fullUrl: patient,
                  resource: { resourceType: 'Patient', name: [{ family: 'Bundled' }] },
                  request: { method: 'POST', url: 'Patient' },
                },
                {
                  resource: {
                    resourceType: 'Observation',
                    status: 'final',
                    code: { text: 'pulse' },
                    subject: { reference: patient },
                  },
                  request: { method: 'POST', url: 'Observation' },
                },
              ],
            }),
          },
          expect: 200,
        };
      },
      graphql: () => ({
        path: '/fhir/R4/$graphql',
        init: {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({ query: '{ PatientList(name: "Seed") { id name { family } } }' }),
        },
        expect: 200,
      }),
      token: () => ({
        path: '/oauth2/token',
        init: {
          method: 'POST',
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: project.clientId,
            client_secret: project.clientSecret,
          }),
        },
        expect: 200,
      }),
      healthz: () => ({ path: '/healthz', init: {}, expect: 200 }),
      'unknown-key token': () => ({
        path: `/fhir/R4/Patient/${seedId}`,
        init: { headers: { Authorization: `Bearer ${foreign}` } },
        expect: 401,
      }),
    };

    send = async (kind) => {
      const { path, init, expect: expected } = requests[kind]();
      const started = performance.now();
      const outcome = (
        status: Outcome['status'],
        healthy: boolean,
        transient: boolean,
        detail: string,
      ) =>
        ({ kind, started, ended: performance.now(), status, healthy, transient, detail }) as const;
      let response: Response;
      let text: string;
      try {
        response = await fetch(`${server.url}${path}`, {
          ...init,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        });
        text = await response.text();
      } catch (error) {
        const timedOut = (error as Error).name === 'TimeoutError';
        return outcome(timedOut ? 'timeout' : 'no answer', false, false, String(error));
      }
      let body: any;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const healthy =
        response.status === expected && (kind !== 'graphql' || body?.errors === undefined);
      // GraphQL carries its OperationOutcomes in errors[].extensions.resource, unless the request
      // was refused before GraphQL ran (checking the token's client needs the store too).
      const outcomes = Array.isArray(body?.errors)
        ? (body.errors as { extensions?: { resource?: any } }[]).map((e) => e.extensions?.resource)
        : [body];
      const transient =
        response.status === 503 &&
        outcomes.length > 0 &&
        outcomes.every(
          (o) => o?.resourceType === 'OperationOutcome' && o.issue?.[0]?.code === 'transient',
        );
      return outcome(response.status, healthy, transient, text.slice(0, 300));
    };
  }, 60_000);

  afterAll(async () => {
    await server?.kill('SIGKILL');
    await postgres?.destroy();
  });

  /**
   * Runs the load, lets `fault` take the database away and bring it back, and checks every
   * answer: success before the fault, a transient 503 or success during it (only 503 while the
   * database is certainly down), success again for every kind within RECOVERY_BOUND_MS of its
   * return and for everything after that — all from the same Graphir process. With `onlyIfRefused`,
   * a fault that no request ran into (it came and went between two of them) is not checked
   * further, and the answer is false: the caller tries again.
   */
  const underLoad = async (
    fault: () => Promise<Fault>,
    { onlyIfRefused = false } = {},
  ): Promise<boolean> => {
    const pid = server.child.pid;
    const outcomes: Outcome[] = [];
    let loading = true;
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      for (let n = client; loading; n++) outcomes.push(await send(KINDS[n % KINDS.length]));
    });
    await sleep(HEALTHY_MS);
    const { from, down, back } = await fault();
    // Recovered: every kind of request has succeeded since the database came back.
    let recovered: number | undefined;
    while (recovered === undefined && performance.now() - back < RECOVERY_BOUND_MS) {
      await sleep(50);
      const again = KINDS.map((kind) =>
        outcomes.find((o) => o.kind === kind && o.started >= back && o.healthy),
      );
      if (again.every(Boolean)) recovered = Math.max(...again.map((o) => o!.ended));
    }
    await sleep(1_000);
    loading = false;
    await Promise.all(clients);

    const describe = (o: Outcome) =>
      `${o.kind} ${o.status} at ${Math.round(o.started - from)} ms: ${o.detail}`;
    // Never a hang, a cut connection, a 500 or a 401; only success or a transient 503.
    expect(outcomes.filter((o) => !o.healthy && !o.transient).map(describe)).toEqual([]);
    expect(outcomes.filter((o) => o.ended < from && !o.healthy).map(describe)).toEqual([]);
    const refused = outcomes.filter((o) => o.transient);
    if (refused.length === 0 && onlyIfRefused) return false;
    expect(refused.length, 'requests were refused during the fault').toBeGreaterThan(0);
    const whileDown = down
      ? outcomes.filter((o) => o.started >= down[0] && o.ended <= down[1])
      : [];
    if (down) {
      // While it is certainly down nothing that needs the store succeeds, and every kind of
      // request is refused. A token with an unknown kid needs the store only when the keys were
      // last read more than KEY_RELOAD_MS ago (token-service.ts); otherwise its 401 is decided
      // from the keys in memory, which is right whether the store is up or not.
      const decidedWithoutStore = (o: Outcome) => o.kind === 'unknown-key token' && o.healthy;
      expect(
        whileDown.filter((o) => !o.transient && !decidedWithoutStore(o)).map(describe),
      ).toEqual([]);
      expect(new Set(whileDown.map((o) => o.kind))).toEqual(new Set(KINDS));
    }
    expect(recovered, 'every kind of request succeeded again').toBeDefined();
    expect(outcomes.filter((o) => o.started >= recovered! && !o.healthy).map(describe)).toEqual([]);
    // The same process throughout.
    expect(server.child.exitCode).toBeNull();
    expect(server.child.pid).toBe(pid);
    // An outage is logged as the database being unavailable (a warning), not as a bug here.
    expect(server.output()).not.toContain('"msg":"internal error"');
    expect(server.output()).toContain('"msg":"database unavailable"');

    return true;
  };

  for (const mode of ['immediate', 'fast'] as const) {
    it(
      `answers 503 while PostgreSQL is down (stop -m ${mode}) and recovers by itself`,
      () =>
        underLoad(async () => {
          const from = performance.now();
          await postgres.stop(mode);
          const stopped = performance.now();
          await sleep(DOWN_MS);
          const starting = performance.now();
          await postgres.start();
          return { from, down: [stopped, starting], back: performance.now() };
        }),
      40_000,
    );
  }

  it('answers 503 when a busy backend is killed and PostgreSQL resets every connection', async () => {
    // The victim may finish its statement between being found and killed, and the reset may
    // pass between two requests (seen once in a full run on a loaded machine): that fault
    // tested nothing, so it is caused again, at most three times in all.
    for (let attempt = 1; attempt <= 3; attempt++)
      if (
        await underLoad(killBusyBackend, {
          onlyIfRefused: attempt < 3,
        })
      )
        return;
  }, 60_000);

  const killBusyBackend = async (): Promise<Fault> => {
    // As the OOM killer would: the killed backend's client sees its socket close with no
    // error message, and the postmaster ends every other backend and recovers. The victim
    // serves a request: the server's background VACUUM (ANALYZE) runs longest, so it was
    // the one most often found busy, and with it killed no request need fail.
    const admin = new pg.Client({ connectionString: postgres.url });
    await admin.connect();
    let victim: number | undefined;
    try {
      while (victim === undefined) {
        const { rows } = await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity
             WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()
               AND query NOT LIKE 'VACUUM%'
             LIMIT 1`,
        );
        victim = rows[0]?.pid;
      }
    } finally {
      await admin.end();
    }
    // Back once the server's log says it is ready again after the reset.
    const readies = () => postgres.log().split('ready to accept connections').length;
    const before = readies();
    const from = performance.now();
    process.kill(victim, 'SIGKILL');
    while (readies() === before) await sleep(20);
    return { from, back: performance.now() };
  };
});

interface Fault {
  /** When the fault began. */
  readonly from: number;
  /** From when to when the database was certainly down, if that is known. */
  readonly down?: readonly [number, number];
  /** When the database was back. */
  readonly back: number;
}

if (unavailable) {
  describe('PostgreSQL restarted under load', () => {
    it.skip(`needs a private PostgreSQL cluster: ${unavailable}`, () => {});
  });
}

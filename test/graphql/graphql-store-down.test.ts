/**
 * `$graphql` while PostgreSQL is out of reach: SERVICE_UNAVAILABLE and 503 in both media types.
 * The server reaches its database through a TCP proxy that the test cuts. A field that fails
 * because the store is down fails the request: in application/json with the data made so far
 * (as always), in application/graphql-response+json without it (the spec allows no `data` beside
 * a non-2xx status). Once the server cannot even check the token's client, the request is
 * refused before GraphQL runs: GraphQL errors in graphql-response+json, the OperationOutcome in
 * plain JSON.
 */
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../runtime/store/open-database.js';
import { postgresUrl, withAdmin } from '../support/postgres-admin.js';
import { createTestDatabase } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const GRAPHQL_RESPONSE = 'application/graphql-response+json';

/** Connections to `target` through a local port; the test cuts them when it likes. */
class CuttableProxy {
  private readonly pairs = new Set<{ client: Socket; upstream: Socket }>();
  private readonly server: Server;

  constructor(target: URL) {
    this.server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      const pair = { client, upstream };
      this.pairs.add(pair);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        this.pairs.delete(pair);
      };
      for (const socket of [client, upstream]) socket.on('error', drop).on('close', drop);
      client.pipe(upstream).pipe(client);
    });
  }

  async listen(): Promise<number> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return (this.server.address() as { port: number }).port;
  }

  /** Takes no new connections, and cuts those open but the ones from `kept` local ports. */
  cut(kept: ReadonlySet<number> = new Set()): void {
    this.server.close();
    for (const { client, upstream } of this.pairs)
      if (!kept.has(upstream.localPort!)) {
        client.destroy();
        upstream.destroy();
      }
  }
}

const adminUrl = await postgresUrl();

describe.skipIf(!adminUrl)('$graphql while PostgreSQL is out of reach', () => {
  let server: TestServer;
  let proxy: CuttableProxy;
  let databaseName: string;

  const graphql = (accept: string) =>
    fetch(`${server.base}/$graphql`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: accept,
        Authorization: `Bearer ${server.project.token}`,
      },
      body: JSON.stringify({ query: '{ PatientList { id } }' }),
    });

  beforeAll(async () => {
    // Opened directly too, to drop it at the end.
    const direct = await createTestDatabase('postgres');
    const url = new URL(direct.url!);
    databaseName = url.pathname.slice(1);
    proxy = new CuttableProxy(url);
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(await proxy.listen());
    const db = await openDatabase({ url: proxied.toString() });
    server = await startTestServer('postgres', {}, { db, url: direct.url, drop: direct.drop });
  });
  afterAll(async () => {
    proxy?.cut();
    await server?.stop();
  });

  it('a field that needs the store: 503, SERVICE_UNAVAILABLE; then the token check: 503', async () => {
    // Answered while the store is up: the token and its client are known from here on.
    for (const accept of [GRAPHQL_RESPONSE, 'application/json'])
      expect((await graphql(accept)).status).toBe(200);
    // The connection that listens for other processes' notices stays: while it hears, the
    // client's check is answered from memory, and the query is what needs the store.
    const listening = await listeningPorts();
    expect(listening.size).toBeGreaterThan(0);
    proxy.cut(listening);

    const modern = await graphql(GRAPHQL_RESPONSE);
    const modernBody = (await modern.json()) as any;
    expect(modern.status, JSON.stringify(modernBody)).toBe(503);
    expect(modern.headers.get('content-type')).toBe(`${GRAPHQL_RESPONSE}; charset=utf-8`);
    expect(modernBody).not.toHaveProperty('data');
    expect(modernBody.errors[0]).toMatchObject({
      path: ['PatientList'],
      extensions: {
        code: 'SERVICE_UNAVAILABLE',
        resource: { resourceType: 'OperationOutcome', issue: [{ code: 'transient' }] },
      },
    });

    const legacy = await graphql('application/json');
    const legacyBody = (await legacy.json()) as any;
    expect(legacy.status, JSON.stringify(legacyBody)).toBe(503);
    expect(legacy.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(legacyBody.data).toEqual({ PatientList: null });
    expect(legacyBody.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');

    // Now nothing reaches the store, and nobody can say whether the token's client still exists
    // once the server has seen its listening connection go.
    proxy.cut();
    await vi.waitFor(() => expect(server.db.notices.hearing).toBe(false), { timeout: 10_000 });
    const refused = await graphql(GRAPHQL_RESPONSE);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toBe(`${GRAPHQL_RESPONSE}; charset=utf-8`);
    expect(await refused.json()).toEqual({
      errors: [
        {
          message: expect.any(String),
          extensions: {
            code: 'SERVICE_UNAVAILABLE',
            resource: {
              resourceType: 'OperationOutcome',
              issue: [expect.objectContaining({ code: 'transient' })],
            },
          },
        },
      ],
    });
    const outcome = await graphql('application/json');
    expect(outcome.status).toBe(503);
    expect(outcome.headers.get('content-type')).toMatch(/^application\/fhir\+json/);
    expect(((await outcome.json()) as any).issue[0].code).toBe('transient');
  });

  /** The local ports of the server's LISTEN connections, as PostgreSQL sees them. */
  async function listeningPorts(): Promise<Set<number>> {
    return withAdmin(adminUrl!, async (admin) => {
      const { rows } = await admin.query<{ client_port: number }>(
        "SELECT client_port FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'LISTEN%'",
        [databaseName],
      );
      return new Set(rows.map((r) => r.client_port));
    });
  }
});

/**
 * Revocation is seen by every server on the database: a deleted client's tokens, and a project
 * secret's old value, stop working on the other server as soon as PostgreSQL has delivered the
 * deleting server's notice — within NOTICE_BOUND_MS, where they used to live on for seconds in
 * each server's memory. On PGlite, one process, at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import {
  serversSharingOneDatabase,
  startTestServer,
  type TestServer,
} from '../support/test-server.js';

const engines = await availableEngines();
/** The bound this test holds the other server to: a notice is delivered in milliseconds. */
const NOTICE_BOUND_MS = 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client of the project with full access, and its token. */
async function newClient(server: TestServer) {
  const root = await server.rootToken();
  const created = await server.call(`/admin/projects/${server.project.projectId}/clients`, {
    method: 'POST',
    body: { name: 'doomed', scope: 'system/*.cruds' },
    token: root,
  });
  expect(created.status).toBe(201);
  const { clientId, clientSecret } = await created.json();
  return { clientId, token: await server.token(clientId, clientSecret) };
}

const echoSecret = `export async function handler(fhir, event) { return event.secrets.KEY?.valueString ?? 'none'; }`;

describe.each(engines)('revocation on one server, %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  it("refuses a deleted client's token on the very next request", async () => {
    const { clientId, token } = await newClient(server);
    expect((await server.fhir('/Patient', { token })).status).toBe(200);
    const deleted = await server.call(
      `/admin/projects/${server.project.projectId}/clients/${clientId}`,
      { method: 'DELETE', token: await server.rootToken() },
    );
    expect(deleted.status).toBe(204);
    expect((await server.fhir('/Patient', { token })).status).toBe(401);
  });
});

describe.runIf(engines.includes('postgres'))('revocation across two servers', () => {
  const servers = serversSharingOneDatabase();

  it(`stops a deleted client's tokens on the other server within ${NOTICE_BOUND_MS} ms`, async () => {
    const { clientId, token } = await newClient(servers.first);
    // The second server has seen the client alive, and keeps that in memory.
    expect((await servers.second.fhir('/Patient', { token })).status).toBe(200);
    expect((await servers.second.fhir('/Patient', { token })).status).toBe(200);
    const deleted = await servers.first.call(
      `/admin/projects/${servers.first.project.projectId}/clients/${clientId}`,
      { method: 'DELETE', token: await servers.first.rootToken() },
    );
    expect(deleted.status).toBe(204);
    await sleep(NOTICE_BOUND_MS);
    expect((await servers.second.fhir('/Patient', { token })).status).toBe(401);
    expect(
      (
        await servers.second.fhir('/Patient', {
          method: 'POST',
          body: { resourceType: 'Patient' },
          token,
        })
      ).status,
    ).toBe(401);
  });

  it(`gives bots on the other server a changed project secret within ${NOTICE_BOUND_MS} ms`, async () => {
    const root = await servers.first.rootToken();
    const put = (value: string) =>
      servers.first.call(`/admin/projects/${servers.first.project.projectId}/secrets/KEY`, {
        method: 'PUT',
        body: { value },
        token: root,
      });
    expect((await put('old')).status).toBeLessThan(300);
    const bot = await (
      await servers.first.fhir('/Bot', {
        method: 'POST',
        body: { resourceType: 'Bot', code: echoSecret },
      })
    ).json();
    const run = async () =>
      (
        await servers.second.fhir(`/Bot/${bot.id}/$execute`, {
          method: 'POST',
          body: 'x',
          headers: { 'Content-Type': 'text/plain' },
        })
      ).text();
    expect(await run()).toBe('old');
    expect((await put('new')).status).toBeLessThan(300);
    await sleep(NOTICE_BOUND_MS);
    expect(await run()).toBe('new');
  });
});

/**
 * Deliveries that fail: an endpoint answering 500 is tried GRAPHIR_JOBS_MAX_ATTEMPTS times (each
 * attempt received once and audited), then the Subscription goes to `error` with the reason,
 * and deliveries to it stop; other Subscriptions' deliveries go on meanwhile. Under the default
 * egress policy a loopback endpoint is refused: no request arrives, the attempt is audited as
 * failed, and the Subscription goes to `error` — a Subscription is no way around the policy. A
 * Subscription whose author client, or author Bot, was deleted sends nothing more and goes to
 * `error` at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startHookServer, type HookServer } from './hook-server.js';
import { deliveryEvents, eventually, subscribe, write } from './subscription-support.js';

const MAX_ATTEMPTS = 2;

describe.each(await availableEngines())('failing deliveries on %s', (engine) => {
  let server: TestServer;
  let guarded: TestServer;
  let hooks: HookServer;
  beforeAll(async () => {
    hooks = await startHookServer();
    server = await startTestServer(engine, {
      GRAPHIR_EGRESS_ALLOW: '127.0.0.1',
      GRAPHIR_JOBS_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
    });
    // The default egress policy: loopback, private and metadata addresses refused.
    guarded = await startTestServer(engine, { GRAPHIR_JOBS_MAX_ATTEMPTS: '1' });
  });
  afterAll(async () => {
    await server?.stop();
    await guarded?.stop();
    await hooks?.close();
  });

  const subscription = async (target: TestServer, id: string) =>
    (await target.fhir(`/Subscription/${id}`)).json();

  it('retries a failing endpoint, then sets the Subscription to error', async () => {
    const failing = await subscribe(server, 'Patient?family=Failing', `${hooks.url}/status/500/x`);
    const healthy = await subscribe(server, 'Patient?family=Failing', `${hooks.url}/healthy`);
    const patient = await write(server, 'POST', '/Patient', {
      resourceType: 'Patient',
      name: [{ family: 'Failing' }],
    });
    // The other Subscription's delivery does not wait for the failing one's retries.
    await hooks.waitFor('/healthy', 1);
    const stopped = await eventually(
      () => subscription(server, failing),
      (s) => s.status === 'error',
    );
    expect(stopped.error).toMatch(
      new RegExp(`^Delivery of Patient/${patient.id}/_history/1: Failed 2 times.*answered 500`),
    );
    expect(hooks.on('/status/500/x')).toHaveLength(MAX_ATTEMPTS);
    const events = await eventually(
      () => deliveryEvents(server, failing),
      (found) => found.length === MAX_ATTEMPTS,
    );
    expect(events.map((e) => [e.outcome, e.outcomeDesc])).toEqual([
      ['4', `Attempt 1 of 2: POST ${hooks.url}/status/500/x answered 500`],
      ['4', `Attempt 2 of 2: POST ${hooks.url}/status/500/x answered 500`],
    ]);
    // An errored Subscription gets no more deliveries; the healthy one does.
    await write(server, 'POST', '/Patient', {
      resourceType: 'Patient',
      name: [{ family: 'Failing' }],
    });
    await hooks.waitFor('/healthy', 2);
    expect(hooks.on('/status/500/x')).toHaveLength(MAX_ATTEMPTS);
    expect((await subscription(server, healthy)).status).toBe('active');
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(
      /graphir_subscription_delivery_failures_total\{channel="rest-hook"\} 1/,
    );
    expect(metrics).toMatch(/graphir_subscription_delivery_retries_total\{channel="rest-hook"\} 1/);
  });

  it('refuses a loopback endpoint under the default egress policy', async () => {
    const refused = await subscribe(guarded, 'Patient?family=Guarded', `${hooks.url}/guarded`);
    await write(guarded, 'POST', '/Patient', {
      resourceType: 'Patient',
      name: [{ family: 'Guarded' }],
    });
    const stopped = await eventually(
      () => subscription(guarded, refused),
      (s) => s.status === 'error',
    );
    expect(stopped.error).toMatch(/127\.0\.0\.1/);
    const [event] = await eventually(
      () => deliveryEvents(guarded, refused),
      (found) => found.length === 1,
    );
    expect(event.outcome).toBe('4');
    expect(event.outcomeDesc).toMatch(/^Attempt 1 of 1: POST .* failed: .*127\.0\.0\.1/);
    expect(hooks.on('/guarded')).toHaveLength(0);
  });

  it('sends nothing for an author client since deleted, and sets the Subscription to error', async () => {
    const root = await server.rootToken();
    const created = await server.call(`/admin/projects/${server.project.projectId}/clients`, {
      method: 'POST',
      body: { name: 'subscriber', scope: 'system/*.cruds' },
      token: root,
    });
    const { clientId, clientSecret } = await created.json();
    const token = await server.token(clientId, clientSecret);
    const orphan = await subscribe(server, 'Patient?family=Orphaned', `${hooks.url}/orphan`, {
      token,
    });
    const kept = await subscribe(server, 'Patient?family=Orphaned', `${hooks.url}/kept`);
    const deleted = await server.call(
      `/admin/projects/${server.project.projectId}/clients/${clientId}`,
      { method: 'DELETE', token: root },
    );
    expect(deleted.status).toBe(204);
    await write(server, 'POST', '/Patient', {
      resourceType: 'Patient',
      name: [{ family: 'Orphaned' }],
    });
    await hooks.waitFor('/kept', 1);
    const stopped = await eventually(
      () => subscription(server, orphan),
      (s) => s.status === 'error',
    );
    expect(stopped.error).toMatch(new RegExp(`Its author, client ${clientId}, no longer exists`));
    const [event] = await eventually(
      () => deliveryEvents(server, orphan),
      (found) => found.length === 1,
    );
    expect(event.outcome).toBe('4');
    expect(hooks.on('/orphan')).toHaveLength(0);
    expect((await subscription(server, kept)).status).toBe('active');
  });

  it('sends nothing for an author Bot since deleted, and sets the Subscription to error', async () => {
    // The Bot writes the Subscription: its author is Bot/{id}.
    const bot = await write(server, 'POST', '/Bot', {
      resourceType: 'Bot',
      name: 'subscriber bot',
      code: `exports.handler = async (fhir, event) => (await fhir.createResource({
        resourceType: 'Subscription', status: 'requested', reason: 'bot',
        criteria: 'Patient?family=BotOrphaned',
        channel: { type: 'rest-hook', endpoint: event.input.endpoint },
      })).id;`,
    });
    const executed = await server.fhir(`/Bot/${bot.id}/$execute`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ endpoint: `${hooks.url}/bot-orphan` }),
    });
    expect(executed.status).toBe(200);
    const orphan = await executed.text();
    const authored = await subscription(server, orphan);
    expect(JSON.stringify(authored.extension)).toContain(`Bot/${bot.id}`);
    // While its Bot exists, it delivers.
    await write(server, 'POST', '/Patient', {
      resourceType: 'Patient',
      name: [{ family: 'BotOrphaned' }],
    });
    await hooks.waitFor('/bot-orphan', 1);
    expect((await server.fhir(`/Bot/${bot.id}`, { method: 'DELETE' })).status).toBe(200);
    await write(server, 'POST', '/Patient', {
      resourceType: 'Patient',
      name: [{ family: 'BotOrphaned' }],
    });
    const stopped = await eventually(
      () => subscription(server, orphan),
      (s) => s.status === 'error',
    );
    expect(stopped.error).toMatch(new RegExp(`Its author, Bot/${bot.id}, no longer exists`));
    const events = await eventually(
      () => deliveryEvents(server, orphan),
      (found) => found.length === 2,
    );
    expect(events.map((e) => e.outcome).sort()).toEqual(['0', '4']);
    expect(hooks.on('/bot-orphan')).toHaveLength(1);
  });
});

/**
 * Rest-hook Subscriptions over HTTP against a loopback endpoint (the server's egress policy
 * allows 127.0.0.1): each matching write is POSTed once, with Medplum's headers and the
 * Subscription's own, the resource as the body when `payload` is set and no body when it is not;
 * writes that do not match, and other projects' writes, deliver nothing; the interaction
 * extension narrows to deletes, delivered with the last version before the delete; a version
 * already replaced by the time it is matched is matched as it was; every attempt is audited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startHookServer, type HookServer } from './hook-server.js';
import {
  deliveryEvents,
  eventually,
  INTERACTION,
  subscribe as subscribeTo,
  write as writeTo,
} from './subscription-support.js';

describe.each(await availableEngines())('rest-hook Subscriptions on %s', (engine) => {
  let server: TestServer;
  let hooks: HookServer;
  beforeAll(async () => {
    hooks = await startHookServer();
    server = await startTestServer(engine, { GRAPHIR_EGRESS_ALLOW: '127.0.0.1' });
  });
  afterAll(async () => {
    await server?.stop();
    await hooks?.close();
  });

  const subscribe = (
    path: string,
    criteria: string,
    extra: { channel?: object; extension?: object[]; token?: string; extra?: object } = {},
  ) => subscribeTo(server, criteria, `${hooks.url}${path}`, extra);
  const write = (method: string, path: string, body?: object, token?: string) =>
    writeTo(server, method, path, body, token);
  const observation = (code: string, status: string) => ({
    resourceType: 'Observation',
    status,
    code: { coding: [{ system: 'urn:test', code }] },
  });

  it('POSTs each matching create and update once, with the headers and the resource', async () => {
    const subscriptionId = await subscribe('/a', 'Observation?code=urn:test|a&status=final', {
      channel: {
        payload: 'application/fhir+json',
        header: ['Authorization: Bearer hook-secret', 'X-Tenant: acme'],
      },
    });
    const created = await write('POST', '/Observation', observation('a', 'final'));
    const [first] = await hooks.waitFor('/a', 1);
    expect(first.method).toBe('POST');
    expect(first.headers).toMatchObject({
      'content-type': 'application/fhir+json',
      authorization: 'Bearer hook-secret',
      'x-tenant': 'acme',
      'x-medplum-subscription': subscriptionId,
      'x-medplum-interaction': 'create',
    });
    expect(JSON.parse(first.body)).toMatchObject({ id: created.id, meta: { versionId: '1' } });
    await write('PUT', `/Observation/${created.id}`, { ...created, valueString: 'two' });
    const [, second] = await hooks.waitFor('/a', 2);
    expect(second.headers['x-medplum-interaction']).toBe('update');
    expect(JSON.parse(second.body)).toMatchObject({ valueString: 'two', meta: { versionId: '2' } });
  });

  it('delivers nothing for writes that do not match, nor for deletes by default', async () => {
    await subscribe('/b', 'Observation?code=urn:test|b&status=final');
    // One resource's writes are matched in order: once version 3 is delivered, versions 1 and 2
    // were matched, and did not match.
    const created = await write('POST', '/Observation', observation('b', 'preliminary'));
    await write('POST', '/Observation', observation('other', 'final'));
    await write('PUT', `/Observation/${created.id}`, { ...created, status: 'amended' });
    await write('PUT', `/Observation/${created.id}`, { ...created, status: 'final' });
    await write('DELETE', `/Observation/${created.id}`);
    const delivered = await hooks.waitFor('/b', 1);
    await write('POST', '/Observation', observation('b', 'final'));
    await hooks.waitFor('/b', 2);
    expect(delivered[0].headers['x-medplum-interaction']).toBe('update');
    // No payload: a bare notification, no body and no Content-Type.
    expect(delivered[0].body).toBe('');
    expect(delivered[0].headers['content-type']).toBeUndefined();
    expect(hooks.on('/b')).toHaveLength(2);
  });

  it('narrows to deletes with the interaction extension, matching the version deleted', async () => {
    await subscribe('/deleted', 'Observation?code=urn:test|d&status=final', {
      channel: { payload: 'application/fhir+json' },
      extension: [{ url: INTERACTION, valueCode: 'delete' }],
    });
    const kept = await write('POST', '/Observation', observation('d', 'final'));
    const preliminary = await write('POST', '/Observation', observation('d', 'preliminary'));
    await write('DELETE', `/Observation/${preliminary.id}`);
    await write('DELETE', `/Observation/${kept.id}`);
    const [delivery] = await hooks.waitFor('/deleted', 1);
    expect(delivery.headers['x-medplum-interaction']).toBe('delete');
    expect(delivery.headers['x-medplum-deleted-resource']).toBe(`Observation/${kept.id}`);
    expect(delivery.body).toBe('{}');
    // The other delete was matched first (it came first, and its deletion did not match).
    await write('POST', '/Observation', observation('d', 'final'));
    await write('DELETE', `/Observation/${kept.id}`);
    expect(hooks.on('/deleted')).toHaveLength(1);
  });

  it('delivers nothing once its end has passed', async () => {
    await subscribe('/ended', 'Patient?family=Ended', {
      extra: { end: '2020-01-01T00:00:00Z' },
    });
    await subscribe('/running', 'Patient?family=Ended');
    await write('POST', '/Patient', { resourceType: 'Patient', name: [{ family: 'Ended' }] });
    // Both were matched by the one job of this write: the one still running got it.
    await hooks.waitFor('/running', 1);
    expect(hooks.on('/ended')).toHaveLength(0);
  });

  it('matches the version written even when a later write replaced it before matching', async () => {
    await subscribe('/replaced', 'Observation?code=urn:test|r&status=preliminary', {
      channel: { payload: 'application/fhir+json' },
    });
    const created = await write('POST', '/Observation', observation('r', 'preliminary'));
    await write('PUT', `/Observation/${created.id}`, { ...created, status: 'final' });
    await write('PUT', `/Observation/${created.id}`, { ...created, status: 'preliminary' });
    const deliveries = await hooks.waitFor('/replaced', 2);
    expect(deliveries.map((d) => JSON.parse(d.body).meta.versionId)).toEqual(['1', '3']);
    const current = await (await server.fhir(`/Observation/${created.id}`)).json();
    expect(current.meta.versionId).toBe('3');
  });

  it('lets writes race the matching of the versions they replace', async () => {
    await subscribe('/racing', 'Observation?code=urn:test|race&status=final', {
      channel: { payload: 'application/fhir+json' },
    });
    // Each update replaces the version a matching job may be matching right then, in a
    // transaction where that version is current again: the write waits, never fails.
    const ids = await Promise.all(
      Array.from(
        { length: 8 },
        async () => (await write('POST', '/Observation', observation('race', 'final'))).id,
      ),
    );
    await Promise.all(
      ids.map(async (id) => {
        for (let n = 0; n < 8; n++)
          await write('PUT', `/Observation/${id}`, {
            ...observation('race', 'final'),
            id,
            valueString: String(n),
          });
        await write('DELETE', `/Observation/${id}`);
      }),
    );
    // Creates and updates: 8 × 9 versions, each delivered once.
    const deliveries = await hooks.waitFor('/racing', 72);
    const versions = deliveries.map((d) => {
      const body = JSON.parse(d.body);
      return `${body.id}@${body.meta.versionId}`;
    });
    expect(new Set(versions).size).toBe(72);
  });

  it('triggers from transaction Bundles and GraphQL mutations alike', async () => {
    await subscribe('/paths', 'Patient?family=Pathfinder');
    await write('POST', '', {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [1, 2, 3].map((n) => ({
        resource: { resourceType: 'Patient', name: [{ family: 'Pathfinder', given: [`P${n}`] }] },
        request: { method: 'POST', url: 'Patient' },
      })),
    });
    const graphql = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({
        query: 'mutation { PatientCreate(res: { name: [{ family: "Pathfinder" }] }) { id } }',
      }),
      headers: { 'Content-Type': 'application/json' },
    });
    expect((await graphql.json()).errors).toBeUndefined();
    await hooks.waitFor('/paths', 4);
  });

  it("never delivers another project's writes", async () => {
    const other = await server.createProject('Other');
    await subscribe('/mine', 'Patient?family=Isolated');
    await subscribe('/theirs', 'Patient?family=Isolated', { token: other.token });
    await write(
      'POST',
      '/Patient',
      { resourceType: 'Patient', name: [{ family: 'Isolated' }] },
      other.token,
    );
    // Their write was matched (against their Subscriptions only) once it reached theirs.
    await hooks.waitFor('/theirs', 1);
    expect(hooks.on('/mine')).toHaveLength(0);
    await write('POST', '/Patient', { resourceType: 'Patient', name: [{ family: 'Isolated' }] });
    await hooks.waitFor('/mine', 1);
    expect(hooks.on('/theirs')).toHaveLength(1);
  });

  it('never triggers a Subscription on its own write', async () => {
    const watcher = await subscribe('/subscriptions', 'Subscription?status=active', {
      channel: { payload: 'application/fhir+json' },
    });
    const other = await subscribe('/unused', 'Patient?family=Nobody');
    const [delivery] = await hooks.waitFor('/subscriptions', 1);
    expect(JSON.parse(delivery.body).id).toBe(other);
    // Its own update is not delivered to it; the next one about another Subscription is.
    const own = await (await server.fhir(`/Subscription/${watcher}`)).json();
    await write('PUT', `/Subscription/${watcher}`, { ...own, reason: 'updated' });
    const third = await subscribe('/unused', 'Patient?family=Nobody');
    const deliveries = await hooks.waitFor('/subscriptions', 2);
    expect(deliveries.map((d) => JSON.parse(d.body).id)).toEqual([other, third]);
    const current = await (await server.fhir(`/Subscription/${watcher}`)).json();
    await write('PUT', `/Subscription/${watcher}`, { ...current, status: 'off' });
  });

  it('records an AuditEvent per delivery and counts it in /metrics', async () => {
    const subscriptionId = await subscribe('/audited', 'Patient?family=Audited');
    const patient = await write('POST', '/Patient', {
      resourceType: 'Patient',
      name: [{ family: 'Audited' }],
    });
    await hooks.waitFor('/audited', 1);
    const events = await eventually(
      () => deliveryEvents(server, subscriptionId),
      (found) => found.length > 0,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: { code: 'transmit' },
      outcome: '0',
      outcomeDesc: expect.stringMatching(/^Attempt 1 of \d+: delivered$/),
      entity: [
        {
          what: { reference: `Subscription/${subscriptionId}` },
          detail: expect.arrayContaining([
            { type: 'endpoint', valueString: `${hooks.url}/audited` },
            { type: 'attempt', valueString: '1' },
          ]),
        },
        { what: { reference: `Patient/${patient.id}/_history/1` } },
      ],
    });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(
      /graphir_subscription_deliveries_total\{channel="rest-hook",outcome="delivered"\} \d+/,
    );
    expect(metrics).toMatch(
      /graphir_subscription_delivery_latency_seconds_count\{channel="rest-hook"\} \d+/,
    );
  });
});

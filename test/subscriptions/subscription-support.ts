/** Subscriptions, their writes and what they leave behind, for the Subscription tests. */
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { TestServer } from '../support/test-server.js';

export const INTERACTION =
  'https://medplum.com/fhir/StructureDefinition/subscription-supported-interaction';

/** A rest-hook Subscription (active once stored): its id. */
export async function subscribe(
  server: TestServer,
  criteria: string,
  endpoint: string,
  extra: { channel?: object; extension?: object[]; token?: string; extra?: object } = {},
): Promise<string> {
  const response = await server.fhir('/Subscription', {
    method: 'POST',
    body: {
      resourceType: 'Subscription',
      status: 'requested',
      reason: 'test',
      criteria,
      channel: { type: 'rest-hook', endpoint, ...extra.channel },
      ...(extra.extension ? { extension: extra.extension } : {}),
      ...extra.extra,
    },
    ...(extra.token ? { token: extra.token } : {}),
  });
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body.id;
}

/** A write that must succeed: the resource (or OperationOutcome) answered. */
export async function write(
  server: TestServer,
  method: string,
  path: string,
  body?: object,
  token?: string,
): Promise<any> {
  const response = await server.fhir(path, {
    method,
    ...(body ? { body } : {}),
    ...(token ? { token } : {}),
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return response.json();
}

/** Polls `read` until `done` holds of its answer; fails after `timeoutMs`. */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`still ${JSON.stringify(value).slice(0, 500)} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** The AuditEvents of a Subscription's deliveries (not of deliveries about it), oldest first. */
export async function deliveryEvents(server: TestServer, subscriptionId: string): Promise<any[]> {
  const bundle = await (
    await server.fhir(`/AuditEvent?entity=Subscription/${subscriptionId}&_sort=_lastUpdated`)
  ).json();
  return (bundle.entry ?? [])
    .map((e: any) => e.resource)
    .filter((event: any) => event.entity[0].what.reference === `Subscription/${subscriptionId}`);
}

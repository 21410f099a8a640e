/**
 * `Subscription.channel.header` under hostile input (issue 38, item 1): headers past the length
 * or count limit, and long runs of blanks that a backtracking pattern once took seconds (then
 * hours) over, are refused with 400 and an OperationOutcome on every write path, storing
 * nothing, while `/healthz` keeps answering; headers within the limits are still delivered,
 * trimmed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOutcome, storedVersions } from '../access/helpers.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';
import { startHookServer, type HookServer } from './hook-server.js';
import { subscribe } from './subscription-support.js';

/** The limits docs/subscriptions.md states. */
const MAX_HEADER_LENGTH = 4_096;
const MAX_HEADERS = 32;

const subscription = (header: unknown[]) => ({
  resourceType: 'Subscription',
  status: 'requested',
  reason: 'test',
  criteria: 'Observation?status=final',
  channel: { type: 'rest-hook', endpoint: 'https://example.org/hook', header },
});

/** Blanks between a name and a line break: under the old pattern, cubic in their number. */
const blanks = (count: number, blank = ' ') => `X-A:${blank.repeat(count)}\n`;

describe.each(await availableEngines())('Subscription channel headers on %s', (engine) => {
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

  const refusals: [string, unknown[]][] = [
    ['100,000 spaces before a line break', [blanks(100_000)]],
    ['4,000 spaces before a line break (within the length limit)', [blanks(4_000)]],
    ['4,000 tabs before a line break', [blanks(4_000, '\t')]],
    ['blanks then a carriage return', [`X-A: x${' '.repeat(4_000)}\r`]],
    ['a name of 100,000 characters', [`${'X'.repeat(100_000)}: 1`]],
    ['a header one past the length limit', [`X-A: ${'v'.repeat(MAX_HEADER_LENGTH - 4)}`]],
    ['one header past the count limit', Array.from({ length: MAX_HEADERS + 1 }, () => 'X-A: 1')],
  ];

  it.each(refusals)('refuses %s with 400 on REST, storing nothing', async (_what, header) => {
    const before = await storedVersions(server);
    const response = await server.fhir('/Subscription', {
      method: 'POST',
      body: subscription(header),
    });
    const outcome = await expectOutcome(response, 400, 'invalid');
    expect(outcome.issue[0].expression).toEqual(['Subscription.channel.header']);
    expect(await storedVersions(server)).toBe(before);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('refuses hostile headers in a transaction and through GraphQL, storing nothing', async () => {
    const before = await storedVersions(server);
    const bundle = await server.fhir('', {
      method: 'POST',
      body: {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            resource: subscription([blanks(100_000)]),
            request: { method: 'POST', url: 'Subscription' },
          },
        ],
      },
    });
    await expectOutcome(bundle, 400, 'invalid');
    const graphql = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({
        query: 'mutation($res: SubscriptionCreate!) { SubscriptionCreate(res: $res) { id } }',
        variables: { res: subscription([blanks(4_000)]) },
      }),
      headers: { 'Content-Type': 'application/json' },
    });
    const answer = await graphql.json();
    expect(answer.errors?.[0]?.message).toMatch(/Subscription\.channel\.header/);
    expect(await storedVersions(server)).toBe(before);
  });

  it('delivers headers within the limits, with the blanks around their values trimmed', async () => {
    const longest = `X-Long: ${'v'.repeat(MAX_HEADER_LENGTH - 8)}`;
    expect(longest).toHaveLength(MAX_HEADER_LENGTH);
    const header = [
      'Authorization: Bearer hook-secret',
      `X-Padded:${' '.repeat(1_000)}value\t \t`,
      'X-Empty:',
      longest,
      ...Array.from({ length: MAX_HEADERS - 4 }, (_, i) => `X-N${i}: ${i}`),
    ];
    expect(header).toHaveLength(MAX_HEADERS);
    await subscribe(server, 'Observation?code=urn:header|a', `${hooks.url}/headers`, {
      channel: { header },
    });
    const created = await server.fhir('/Observation', {
      method: 'POST',
      body: {
        resourceType: 'Observation',
        status: 'final',
        code: { coding: [{ system: 'urn:header', code: 'a' }] },
      },
    });
    expect(created.status).toBe(201);
    const [delivery] = await hooks.waitFor('/headers', 1);
    expect(delivery.headers).toMatchObject({
      authorization: 'Bearer hook-secret',
      'x-padded': 'value',
      'x-empty': '',
      'x-long': 'v'.repeat(MAX_HEADER_LENGTH - 8),
      'x-n27': '27',
    });
  });
});

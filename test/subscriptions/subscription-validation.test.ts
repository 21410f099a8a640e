/**
 * Subscription writes on every path (REST create, update and PATCH, transaction Bundles,
 * GraphQL): a Subscription the server cannot deliver is refused with 400 and an OperationOutcome
 * naming the element, storing nothing; an accepted one is `active` and records its author, whose
 * access it must have (403 otherwise).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOutcome, scopedClient, storedVersions } from '../access/helpers.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const AUTHOR = 'https://graphir.dev/fhir/StructureDefinition/subscription-author';
const INTERACTION =
  'https://medplum.com/fhir/StructureDefinition/subscription-supported-interaction';

const subscription = (extra: object = {}, channel: object = {}) => ({
  resourceType: 'Subscription',
  status: 'requested',
  reason: 'test',
  criteria: 'Observation?status=final',
  channel: { type: 'rest-hook', endpoint: 'https://example.org/hook', ...channel },
  ...extra,
});

describe.each(await availableEngines())('Subscription writes on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  const post = (body: object, token?: string) =>
    server.fhir('/Subscription', { method: 'POST', body, ...(token ? { token } : {}) });

  it('sets a requested Subscription active and records its author', async () => {
    const response = await post(
      subscription({}, { payload: 'application/fhir+json', header: ['Authorization: Bearer x'] }),
    );
    expect(response.status).toBe(201);
    const body = await response.json();
    expect(body.status).toBe('active');
    const author = body.extension.find((e: any) => e.url === AUTHOR);
    expect(author.extension).toEqual([
      { url: 'client', valueString: server.project.clientId },
      { url: 'scope', valueString: expect.stringContaining('system/') },
      { url: 'admin', valueBoolean: true },
    ]);
    const read = await (await server.fhir(`/Subscription/${body.id}`)).json();
    expect(read.status).toBe('active');
  });

  it('keeps off and error as written, and accepts application/json, Bot endpoints and criteria without parameters', async () => {
    for (const body of [
      subscription({ status: 'off' }),
      subscription({ status: 'error', error: 'was failing' }),
      subscription({}, { payload: 'application/json' }),
      subscription({ criteria: 'Patient' }, { endpoint: 'Bot/some-bot' }),
      subscription({
        extension: [{ url: INTERACTION, valueCode: 'delete' }],
      }),
    ]) {
      const response = await post(body);
      expect(response.status, JSON.stringify(body)).toBe(201);
      const stored = await response.json();
      expect(stored.status).toBe(body.status === 'requested' ? 'active' : body.status);
    }
  });

  it('writes over an author a client names, with the writer', async () => {
    const forged = subscription({
      extension: [{ url: AUTHOR, extension: [{ url: 'client', valueString: 'someone-else' }] }],
    });
    const body = await (await post(forged)).json();
    const authors = body.extension.filter((e: any) => e.url === AUTHOR);
    expect(authors).toHaveLength(1);
    expect(authors[0].extension[0].valueString).toBe(server.project.clientId);
  });

  const refusals: [string, object, string][] = [
    ['an unknown type', subscription({ criteria: 'Nothing?x=1' }), 'Subscription.criteria'],
    [
      'an unknown parameter',
      subscription({ criteria: 'Observation?colour=red' }),
      'Subscription.criteria',
    ],
    [
      'a bad value',
      subscription({ criteria: 'Observation?date=yesterday' }),
      'Subscription.criteria',
    ],
    ['_sort', subscription({ criteria: 'Observation?_sort=date' }), 'Subscription.criteria'],
    [
      '_include',
      subscription({ criteria: 'Observation?_include=Observation:subject' }),
      'Subscription.criteria',
    ],
    ['AuditEvent', subscription({ criteria: 'AuditEvent?action=E' }), 'Subscription.criteria'],
    ['an empty criteria', subscription({ criteria: '' }), 'Subscription.criteria'],
    ['a websocket channel', subscription({}, { type: 'websocket' }), 'Subscription.channel.type'],
    ['an email channel', subscription({}, { type: 'email' }), 'Subscription.channel.type'],
    ['no endpoint', subscription({}, { endpoint: undefined }), 'Subscription.channel.endpoint'],
    [
      'a relative endpoint',
      subscription({}, { endpoint: '/hook' }),
      'Subscription.channel.endpoint',
    ],
    [
      'an ftp endpoint',
      subscription({}, { endpoint: 'ftp://example.org/x' }),
      'Subscription.channel.endpoint',
    ],
    [
      'a bad Bot endpoint',
      subscription({}, { endpoint: 'Bot/a/b' }),
      'Subscription.channel.endpoint',
    ],
    [
      'an XML payload',
      subscription({}, { payload: 'application/fhir+xml' }),
      'Subscription.channel.payload',
    ],
    [
      'a header without a colon',
      subscription({}, { header: ['Authorization Bearer'] }),
      'Subscription.channel.header',
    ],
    [
      'a header with a line break',
      subscription({}, { header: ['X-A: 1\r\nX-B: 2'] }),
      'Subscription.channel.header',
    ],
    [
      'a Host header',
      subscription({}, { header: ['Host: evil.example'] }),
      'Subscription.channel.header',
    ],
    [
      'an unknown interaction',
      subscription({ extension: [{ url: INTERACTION, valueCode: 'read' }] }),
      'Subscription.extension',
    ],
  ];

  it.each(refusals)('refuses %s with 400, storing nothing', async (_what, body, element) => {
    const before = await storedVersions(server);
    const response = await post(body);
    const outcome = await expectOutcome(response, 400, expect.any(String) as unknown as string);
    expect(outcome.issue[0].expression ?? [outcome.issue[0].diagnostics]).toEqual([
      expect.stringContaining(element),
    ]);
    expect(await storedVersions(server)).toBe(before);
  });

  it('refuses a status FHIR does not define, through the generated validation', async () => {
    const before = await storedVersions(server);
    await expectOutcome(await post(subscription({ status: 'paused' })), 400, 'value');
    expect(await storedVersions(server)).toBe(before);
  });

  it('checks updates, PATCH, transaction Bundles and GraphQL alike', async () => {
    const created = await (await post(subscription())).json();
    const before = await storedVersions(server);
    const update = await server.fhir(`/Subscription/${created.id}`, {
      method: 'PUT',
      body: { ...created, channel: { type: 'sms', endpoint: 'tel:123' } },
    });
    await expectOutcome(update, 400, 'invalid');
    const patch = await server.fhir(`/Subscription/${created.id}`, {
      method: 'PATCH',
      body: JSON.stringify([{ op: 'replace', path: '/criteria', value: 'Observation?nope=1' }]),
      headers: { 'Content-Type': 'application/json-patch+json' },
    });
    await expectOutcome(patch, 400, 'invalid');
    const bundle = await server.fhir('', {
      method: 'POST',
      body: {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            resource: { resourceType: 'Patient' },
            request: { method: 'POST', url: 'Patient' },
          },
          {
            resource: subscription({ criteria: 'Observation?_count=1' }),
            request: { method: 'POST', url: 'Subscription' },
          },
        ],
      },
    });
    await expectOutcome(bundle, 400, 'invalid');
    const graphql = await server.fhir('/$graphql', {
      method: 'POST',
      body: JSON.stringify({
        query: `mutation { SubscriptionCreate(res: ${graphqlLiteral(subscription({ criteria: 'Nope' }))}) { id } }`,
      }),
      headers: { 'Content-Type': 'application/json' },
    });
    const answer = await graphql.json();
    expect(answer.errors?.[0]?.message).toMatch(/Subscription\.criteria/);
    expect(await storedVersions(server)).toBe(before);
    // A valid update through a Bundle is accepted, and set active.
    const ok = await server.fhir('', {
      method: 'POST',
      body: {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            resource: { ...created, status: 'requested' },
            request: { method: 'PUT', url: `Subscription/${created.id}` },
          },
        ],
      },
    });
    expect(ok.status).toBe(200);
    expect((await ok.json()).entry[0].resource.status).toBe('active');
  });

  it("refuses an author who may not search the criteria's type, or run a Bot endpoint (403)", async () => {
    const admin = server.project.token;
    const reader = await scopedClient(
      server,
      server.project.projectId,
      admin,
      'system/Subscription.cruds system/Patient.rs',
    );
    const before = await storedVersions(server);
    await expectOutcome(await post(subscription(), reader.token), 403, 'forbidden');
    await expectOutcome(
      await post(subscription({ criteria: 'Patient' }, { endpoint: 'Bot/x' }), reader.token),
      403,
      'forbidden',
    );
    expect(await storedVersions(server)).toBe(before);
    const allowed = await post(subscription({ criteria: 'Patient?name=x' }), reader.token);
    expect(allowed.status).toBe(201);
  });
});

/** A JSON value as a GraphQL input literal (keys unquoted). */
function graphqlLiteral(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(graphqlLiteral).join(', ')}]`;
  if (value && typeof value === 'object')
    return `{ ${Object.entries(value)
      .filter(([key]) => key !== 'resourceType')
      .map(([key, v]) => `${key}: ${graphqlLiteral(v)}`)
      .join(', ')} }`;
  return JSON.stringify(value);
}

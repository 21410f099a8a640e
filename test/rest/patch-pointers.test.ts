/**
 * The JSON Pointers of a PATCH (`path`, `from`) under hostile input (issue 38, item 2): runs of
 * `/` ending in a bad escape, which a backtracking pattern once took seconds over (doubling with
 * each `/`), and pointers past the length limit are refused with 400 and an OperationOutcome,
 * on PATCH and in a transaction, storing nothing, while `/healthz` keeps answering; pointers
 * within the limit, escapes included, still reach the resource.
 * @see https://www.rfc-editor.org/rfc/rfc6901
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOutcome, storedVersions } from '../access/helpers.js';
import { availableEngines } from '../support/test-databases.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const JSON_PATCH = { 'Content-Type': 'application/json-patch+json' };
/** The limit docs/rest.md states. */
const MAX_POINTER_LENGTH = 1_024;

const slashes = (count: number, tail = '~') => `${'/'.repeat(count)}${tail}`;

describe.each(await availableEngines())('JSON Patch pointers on %s', (engine) => {
  let server: TestServer;
  let id: string;
  beforeAll(async () => {
    server = await startTestServer(engine);
    const created = await server.fhir('/Patient', {
      method: 'POST',
      body: { resourceType: 'Patient', name: [{ family: 'Pointer' }] },
    });
    id = (await created.json()).id;
  });
  afterAll(() => server?.stop());

  const patch = (body: unknown) =>
    server.fhir(`/Patient/${id}`, {
      method: 'PATCH',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: JSON_PATCH,
    });

  const refusals: [string, unknown][] = [
    [
      'the 64-byte body of the issue',
      '[{"op":"test","path":"////////////////////////////~","value":1}]',
    ],
    ['60 slashes and a bad escape', [{ op: 'test', path: slashes(60), value: 1 }]],
    [
      '1,000 slashes and a bad escape (within the length limit)',
      [{ op: 'test', path: slashes(1_000), value: 1 }],
    ],
    ['100,000 slashes and a bad escape', [{ op: 'test', path: slashes(100_000), value: 1 }]],
    ['a from of 60 slashes and a bad escape', [{ op: 'copy', from: slashes(60), path: '/name/-' }]],
    ['an escape of ~2', [{ op: 'test', path: '/name/~2', value: 1 }]],
    ['a pointer without its leading slash', [{ op: 'test', path: 'name', value: 1 }]],
    [
      'a pointer one past the length limit',
      [{ op: 'test', path: `/${'a'.repeat(MAX_POINTER_LENGTH)}`, value: 1 }],
    ],
  ];

  it.each(refusals)('refuses %s with 400, storing nothing', async (_what, body) => {
    const before = await storedVersions(server);
    const outcome = await expectOutcome(await patch(body), 400, 'structure');
    expect(outcome.issue[0].diagnostics).toMatch(/JSON Pointer/);
    expect(await storedVersions(server)).toBe(before);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('refuses a hostile pointer in a transaction, storing nothing', async () => {
    const before = await storedVersions(server);
    const document = [{ op: 'test', path: slashes(60), value: 1 }];
    const response = await server.fhir('', {
      method: 'POST',
      body: {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            resource: {
              resourceType: 'Binary',
              contentType: 'application/json-patch+json',
              data: Buffer.from(JSON.stringify(document)).toString('base64'),
            },
            request: { method: 'PATCH', url: `Patient/${id}` },
          },
        ],
      },
    });
    await expectOutcome(response, 400, 'structure');
    expect(await storedVersions(server)).toBe(before);
  });

  it('follows well-formed pointers within the limit, escapes included', async () => {
    // Well formed, so checked against the resource: 422, as a path that is not there.
    for (const path of [`/${'a'.repeat(MAX_POINTER_LENGTH - 1)}`, slashes(1_000, ''), '/a~0b~1c']) {
      const response = await patch([{ op: 'test', path, value: 1 }]);
      expect(response.status, path.slice(0, 40)).toBe(422);
    }
    const response = await patch([
      { op: 'test', path: '/name/0/family', value: 'Pointer' },
      { op: 'copy', from: '/name/0', path: '/name/-' },
      { op: 'replace', path: '/name/1/family', value: 'Copied' },
    ]);
    expect(response.status).toBe(200);
    expect((await response.json()).name).toEqual([{ family: 'Pointer' }, { family: 'Copied' }]);
  });
});

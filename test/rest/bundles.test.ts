import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { availableEngines } from '../support/test-databases.js';
import { storedVersions } from '../support/stored-versions.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

const patientEntry = (uuid: string, family: string) => ({
  fullUrl: `urn:uuid:${uuid}`,
  resource: { resourceType: 'Patient', name: [{ family }] },
  request: { method: 'POST', url: 'Patient' },
});
const observationEntry = (subject: string) => ({
  resource: {
    resourceType: 'Observation',
    status: 'final',
    code: { text: 'weight' },
    subject: { reference: subject },
    valueQuantity: { value: 70, unit: 'kg' },
  },
  request: { method: 'POST', url: 'Observation' },
});

describe.each(await availableEngines())('transaction and batch Bundles on %s', (engine) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(engine);
  });
  afterAll(() => server?.stop());

  it('stores a transaction atomically, rewrites urn:uuid references, keeps the order of entries', async () => {
    const bundle = {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        observationEntry('urn:uuid:11111111-1111-1111-1111-111111111111'),
        patientEntry('11111111-1111-1111-1111-111111111111', 'Atomic'),
      ],
    };
    const response = await server.fhir('/', { method: 'POST', body: bundle });
    expect(response.status).toBe(200);
    const result = await response.json();
    expect(result).toMatchObject({ resourceType: 'Bundle', type: 'transaction-response' });
    expect(result.entry).toHaveLength(2);
    const [observation, patient] = result.entry;
    expect(observation.response).toMatchObject({
      status: '201 Created',
      location: expect.stringMatching(/^Observation\/[^/]+\/_history\/1$/),
    });
    expect(patient.response.location).toMatch(/^Patient\/[^/]+\/_history\/1$/);
    const patientId = patient.response.location.split('/')[1];
    const stored = await (
      await server.fhir(`/${observation.response.location.split('/_history')[0]}`)
    ).json();
    expect(stored.subject.reference).toBe(`Patient/${patientId}`);
  });

  it('rolls the whole transaction back when one entry fails', async () => {
    const before = await storedVersions(server);
    const bundle = {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        patientEntry('22222222-2222-2222-2222-222222222222', 'Rolled back'),
        {
          resource: { resourceType: 'Observation', code: { text: 'no status' } },
          request: { method: 'POST', url: 'Observation' },
        },
      ],
    };
    const response = await server.fhir('/', { method: 'POST', body: bundle });
    expect(response.status).toBe(400);
    const outcome = await response.json();
    expect(outcome.resourceType).toBe('OperationOutcome');
    expect(outcome.issue[0].diagnostics).toMatch(
      /Bundle.entry\[1\]: Observation.status is required/,
    );
    expect(await storedVersions(server)).toBe(before);
  });

  it('rolls back a transaction whose update fails If-Match after earlier entries were written', async () => {
    const { id } = await (
      await server.fhir('/Patient', { method: 'POST', body: { resourceType: 'Patient' } })
    ).json();
    const before = await storedVersions(server);
    const bundle = {
      resourceType: 'Bundle',
      type: 'transaction',
      entry: [
        patientEntry('33333333-3333-3333-3333-333333333333', 'Created first'),
        {
          resource: { resourceType: 'Patient', id, active: true },
          request: { method: 'PUT', url: `Patient/${id}`, ifMatch: 'W/"9"' },
        },
      ],
    };
    const response = await server.fhir('/', { method: 'POST', body: bundle });
    expect(response.status).toBe(412);
    expect(await storedVersions(server)).toBe(before);
  });

  it('processes a batch entry by entry', async () => {
    const bundle = {
      resourceType: 'Bundle',
      type: 'batch',
      entry: [
        patientEntry('44444444-4444-4444-4444-444444444444', 'Batched'),
        {
          resource: { resourceType: 'Observation', code: { text: 'no status' } },
          request: { method: 'POST', url: 'Observation' },
        },
        { request: { method: 'GET', url: 'Patient/does-not-exist' } },
      ],
    };
    const result = await (await server.fhir('/', { method: 'POST', body: bundle })).json();
    expect(result.type).toBe('batch-response');
    expect(result.entry.map((e: { response: { status: string } }) => e.response.status)).toEqual([
      '201 Created',
      '400',
      '404',
    ]);
    expect(result.entry[1].response.outcome.resourceType).toBe('OperationOutcome');
  });

  it.each([
    ['not a Bundle', { resourceType: 'Patient' }, /takes a Bundle/],
    [
      'a Bundle of another type',
      { resourceType: 'Bundle', type: 'collection' },
      /transaction or batch/,
    ],
    [
      'an entry without request',
      {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [{ resource: { resourceType: 'Patient' } }],
      },
      /request.method and request.url are required/,
    ],
    [
      'an unknown method',
      {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          { resource: { resourceType: 'Patient' }, request: { method: 'HEAD', url: 'Patient/1' } },
        ],
      },
      /request.method HEAD is not supported/,
    ],
    [
      'a resource of another type than its url',
      {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            resource: { resourceType: 'Patient' },
            request: { method: 'POST', url: 'Observation' },
          },
        ],
      },
      /names Observation/,
    ],
  ])('refuses %s with 400', async (_name, body, message) => {
    const response = await server.fhir('/', { method: 'POST', body });
    expect(response.status).toBe(400);
    expect(JSON.stringify(await response.json())).toMatch(message);
  });
});

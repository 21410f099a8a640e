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
      'an ifNoneExist that is not text',
      {
        resourceType: 'Bundle',
        type: 'transaction',
        entry: [
          {
            resource: { resourceType: 'Patient' },
            request: { method: 'POST', url: 'Patient', ifNoneExist: { identifier: 'x' } },
          },
        ],
      },
      /request.ifNoneExist must be a string/,
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

/** A transaction or batch entry carrying JSON Patch, as FHIR R4 does: a Binary, in base64. */
const patchEntry = (
  url: string,
  operations: unknown,
  contentType = 'application/json-patch+json',
) => ({
  resource: {
    resourceType: 'Binary',
    contentType,
    data: Buffer.from(
      typeof operations === 'string' ? operations : JSON.stringify(operations),
    ).toString('base64'),
  },
  request: { method: 'PATCH', url },
});
const withMrn = (mrn: string, extra: object = {}) => ({
  resourceType: 'Patient',
  identifier: [{ system: 'urn:bundle:mrn', value: mrn }],
  ...extra,
});
const bundleOf = (type: string, entry: unknown[]) => ({ resourceType: 'Bundle', type, entry });

describe.each(await availableEngines())(
  'conditional and PATCH entries in Bundles on %s',
  (engine) => {
    let server: TestServer;
    beforeAll(async () => {
      server = await startTestServer(engine);
    });
    afterAll(() => server?.stop());

    const create = async (body: object): Promise<string> =>
      (await (await server.fhir('/Patient', { method: 'POST', body })).json()).id;
    const read = async (reference: string) => (await server.fhir(`/${reference}`)).json();

    it('resolves conditional updates and deletes, patches, and rewrites references to them', async () => {
      const old = await create(withMrn('old'));
      const gone = await create(withMrn('gone'));
      const patched = await create(withMrn('patched', { active: false }));
      const newcomer = 'urn:uuid:55555555-5555-5555-5555-555555555555';
      const response = await server.fhir('/', {
        method: 'POST',
        body: bundleOf('transaction', [
          {
            fullUrl: newcomer,
            resource: withMrn('new'),
            request: { method: 'PUT', url: 'Patient?identifier=urn:bundle:mrn|new' },
          },
          {
            resource: withMrn('old', { active: true }),
            request: { method: 'PUT', url: 'Patient?identifier=urn:bundle:mrn|old' },
          },
          { request: { method: 'DELETE', url: 'Patient?identifier=urn:bundle:mrn|gone' } },
          { request: { method: 'DELETE', url: 'Patient?identifier=urn:bundle:mrn|nobody' } },
          patchEntry(`Patient/${patched}`, [
            { op: 'replace', path: '/active', value: true },
            {
              op: 'add',
              path: '/link',
              value: [{ other: { reference: newcomer }, type: 'seealso' }],
            },
          ]),
          observationEntry(newcomer),
        ]),
      });
      expect(response.status).toBe(200);
      const result = await response.json();
      expect(result.entry.map((e: { response: { status: string } }) => e.response.status)).toEqual([
        '201 Created',
        '200 OK',
        '200 OK',
        '200 OK',
        '200 OK',
        '201 Created',
      ]);
      const created = result.entry[0].response.location.split('/_history')[0];
      expect(result.entry[1].response.location).toBe(`Patient/${old}/_history/2`);
      expect(result.entry[3].response.outcome.issue[0].diagnostics).toMatch(/nothing was deleted/);
      expect(await read(created)).toMatchObject(withMrn('new'));
      expect(await read(`Patient/${old}`)).toMatchObject({ active: true });
      expect((await server.fhir(`/Patient/${gone}`)).status).toBe(410);
      expect(await read(`Patient/${patched}`)).toMatchObject({
        active: true,
        link: [{ other: { reference: created } }],
        meta: { versionId: '2' },
      });
      const observation = await read(result.entry[5].response.location.split('/_history')[0]);
      expect(observation.subject.reference).toBe(created);
    });

    it('rewrites a reference a patch writes as a string', async () => {
      const patched = await create(
        withMrn('patched-string', {
          link: [{ other: { reference: 'Patient/x' }, type: 'seealso' }],
        }),
      );
      const newcomer = 'urn:uuid:66666666-6666-6666-6666-666666666666';
      const response = await server.fhir('/', {
        method: 'POST',
        body: bundleOf('transaction', [
          { ...patientEntry('66666666-6666-6666-6666-666666666666', 'Linked') },
          patchEntry(`Patient/${patched}`, [
            { op: 'replace', path: '/link/0/other/reference', value: newcomer },
          ]),
        ]),
      });
      expect(response.status).toBe(200);
      const result = await response.json();
      const created = result.entry[0].response.location.split('/_history')[0];
      expect((await read(`Patient/${patched}`)).link[0].other.reference).toBe(created);
    });

    it('answers each batch entry on its own', async () => {
      const patched = await create(withMrn('batch-patched'));
      await create(withMrn('batch-twin'));
      await create(withMrn('batch-twin'));
      const result = await (
        await server.fhir('/', {
          method: 'POST',
          body: bundleOf('batch', [
            patchEntry(`Patient/${patched}`, [{ op: 'add', path: '/active', value: true }]),
            {
              resource: withMrn('batch-twin'),
              request: { method: 'PUT', url: 'Patient?identifier=urn:bundle:mrn|batch-twin' },
            },
            {
              resource: withMrn('batch-new'),
              request: { method: 'PUT', url: 'Patient?identifier=urn:bundle:mrn|batch-new' },
            },
            { request: { method: 'DELETE', url: 'Patient?identifier=urn:bundle:mrn|batch-twin' } },
            { request: { method: 'DELETE', url: 'Patient?identifier=urn:bundle:mrn|nobody' } },
            patchEntry(`Patient/${patched}`, [{ op: 'test', path: '/active', value: false }]),
          ]),
        })
      ).json();
      expect(result.entry.map((e: { response: { status: string } }) => e.response.status)).toEqual([
        '200 OK',
        '412',
        '201 Created',
        '412',
        '200 OK',
        '422',
      ]);
      expect(await read(`Patient/${patched}`)).toMatchObject({ active: true });
    });

    it('rolls back the whole transaction when a conditional entry or a patch fails', async () => {
      await create(withMrn('twin'));
      await create(withMrn('twin'));
      const patched = await create(withMrn('rolled-back'));
      for (const [failing, status, message] of [
        [
          {
            resource: withMrn('twin'),
            request: { method: 'PUT', url: 'Patient?identifier=urn:bundle:mrn|twin' },
          },
          412,
          /Bundle.entry\[1\]: Conditional update: identifier=urn:bundle:mrn\|twin matches more than one Patient/,
        ],
        [
          { request: { method: 'DELETE', url: 'Patient?identifier=urn:bundle:mrn|twin' } },
          412,
          /Bundle.entry\[1\]: Conditional delete/,
        ],
        [
          patchEntry(`Patient/${patched}`, [{ op: 'test', path: '/active', value: true }]),
          422,
          /Bundle.entry\[1\]: operation 0 \(test \/active\)/,
        ],
        [
          patchEntry(`Patient/${patched}`, [{ op: 'add', path: '/nmae', value: 'x' }]),
          400,
          /Bundle.entry\[1\]: Unknown element/,
        ],
        [
          patchEntry('Patient/does-not-exist', []),
          404,
          /Bundle.entry\[1\]: Patient\/does-not-exist is not known/,
        ],
      ] as const) {
        const before = await storedVersions(server);
        const response = await server.fhir('/', {
          method: 'POST',
          body: bundleOf('transaction', [
            patientEntry('77777777-7777-7777-7777-777777777777', 'First'),
            failing,
          ]),
        });
        expect(response.status).toBe(status);
        const outcome = await response.json();
        expect(outcome.resourceType).toBe('OperationOutcome');
        expect(JSON.stringify(outcome)).toMatch(message);
        expect(await storedVersions(server)).toBe(before);
      }
    });

    it('resolves conditional entries before writing, and refuses two entries writing one resource', async () => {
      const target = await create(withMrn('overlap'));
      for (const [first, second] of [
        [
          { request: { method: 'DELETE', url: 'Patient?identifier=urn:bundle:mrn|overlap' } },
          {
            resource: withMrn('overlap', { id: target }),
            request: { method: 'PUT', url: `Patient/${target}` },
          },
        ],
        [
          {
            resource: withMrn('overlap'),
            request: { method: 'PUT', url: 'Patient?identifier=urn:bundle:mrn|overlap' },
          },
          patchEntry(`Patient/${target}`, [{ op: 'add', path: '/active', value: true }]),
        ],
      ]) {
        const before = await storedVersions(server);
        const response = await server.fhir('/', {
          method: 'POST',
          body: bundleOf('transaction', [first, second]),
        });
        expect(response.status).toBe(400);
        expect(JSON.stringify(await response.json())).toMatch(
          `Bundle.entry[0] (${first.request.method} ${first.request.url}) and Bundle.entry[1] (${second.request.method} ${second.request.url}) both name Patient/${target}`,
        );
        expect(await storedVersions(server)).toBe(before);
      }
    });

    it('checks the scopes of conditional and PATCH entries before writing anything', async () => {
      const patched = await create(withMrn('scoped'));
      const { clientId, clientSecret } = server.project;
      for (const [scope, entry] of [
        [
          'system/Patient.crs',
          patchEntry(`Patient/${patched}`, [{ op: 'add', path: '/active', value: true }]),
        ],
        [
          'system/Patient.cud',
          {
            resource: withMrn('scoped'),
            request: { method: 'PUT', url: 'Patient?identifier=urn:bundle:mrn|scoped' },
          },
        ],
        [
          'system/Patient.crus',
          { request: { method: 'DELETE', url: 'Patient?identifier=urn:bundle:mrn|scoped' } },
        ],
      ] as const) {
        const before = await storedVersions(server);
        const response = await server.fhir('/', {
          method: 'POST',
          body: bundleOf('transaction', [
            patientEntry('88888888-8888-8888-8888-888888888888', 'Scoped'),
            entry,
          ]),
          token: await server.token(clientId, clientSecret, scope),
        });
        expect(response.status).toBe(403);
        expect(await storedVersions(server)).toBe(before);
      }
    });

    const deep = `${'['.repeat(600)}${']'.repeat(600)}`;
    it.each([
      [
        'a PATCH carrying a FHIRPath Patch',
        {
          resource: { resourceType: 'Parameters', parameter: [] },
          request: { method: 'PATCH', url: 'Patient/x' },
        },
        /FHIRPath Patch is not supported/,
      ],
      [
        'a PATCH Binary of another content type',
        patchEntry('Patient/x', [], 'application/json'),
        /must be a Binary whose contentType is application\/json-patch\+json/,
      ],
      [
        'a PATCH Binary without data',
        {
          resource: { resourceType: 'Binary', contentType: 'application/json-patch+json' },
          request: { method: 'PATCH', url: 'Patient/x' },
        },
        /has no data/,
      ],
      [
        'a PATCH Binary that is no JSON',
        patchEntry('Patient/x', '[{"op":'),
        /not a JSON Patch in base64/,
      ],
      [
        'a PATCH Binary that is no array',
        patchEntry('Patient/x', { op: 'add' }),
        /an array of operations/,
      ],
      [
        'a PATCH Binary nested too deep',
        patchEntry('Patient/x', deep),
        /nests more than 500 levels/,
      ],
      ['a PATCH of a type', patchEntry('Patient', []), /PATCH request.url must be Type\/id/],
      [
        'a conditional PATCH',
        patchEntry('Patient?identifier=x', []),
        /Conditional PATCH \(Patient\?identifier=x\) is not supported/,
      ],
      [
        'a POST with a search in its url',
        { resource: withMrn('x'), request: { method: 'POST', url: 'Patient?identifier=x' } },
        /use request.ifNoneExist/,
      ],
      [
        'a url with an id and a search',
        { resource: withMrn('x'), request: { method: 'PUT', url: 'Patient/1?identifier=x' } },
        /neither Type\/id nor Type\?search/,
      ],
      [
        'a conditional update with an unknown parameter',
        { resource: withMrn('x'), request: { method: 'PUT', url: 'Patient?mrn=x' } },
        /mrn is not a search parameter of Patient/,
      ],
      [
        'a conditional delete without parameters',
        { request: { method: 'DELETE', url: 'Patient?' } },
        /Conditional delete needs at least one search parameter/,
      ],
    ])('refuses %s with 400, storing nothing', async (_name, entry, message) => {
      const before = await storedVersions(server);
      const response = await server.fhir('/', {
        method: 'POST',
        body: bundleOf('transaction', [
          patientEntry('99999999-9999-9999-9999-999999999999', 'Not stored'),
          entry,
        ]),
      });
      expect(response.status).toBe(400);
      const outcome = await response.json();
      expect(outcome.issue[0].diagnostics).toMatch(/^Bundle.entry\[1\]: /);
      expect(JSON.stringify(outcome)).toMatch(message);
      expect(await storedVersions(server)).toBe(before);
    });
  },
);

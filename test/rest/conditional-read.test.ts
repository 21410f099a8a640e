/**
 * Conditional reads (runtime/rest/conditional-read.ts): 304 without a body when `If-None-Match`
 * names the current version or `If-Modified-Since` is not before its last update; the resource
 * otherwise, and after every change; in Bundles, GET entries' `request.ifNoneMatch` and
 * `request.ifModifiedSince` the same way (entries answer `etag` and `lastModified`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/test-server.js';

let server: TestServer;
let id: string;
let lastModified: string;
beforeAll(async () => {
  server = await startTestServer('pglite');
  const created = await server.fhir('/Patient', {
    method: 'POST',
    body: { resourceType: 'Patient', name: [{ family: 'Conditional' }] },
  });
  id = (await created.json()).id;
  lastModified = created.headers.get('last-modified')!;
});
afterAll(() => server?.stop());

const read = (headers: Record<string, string>, path = `/Patient/${id}`) =>
  server.fhir(path, { headers });

describe('conditional read', () => {
  it.each([
    ['the version, weak', { 'If-None-Match': 'W/"1"' }],
    ['the version, strong', { 'If-None-Match': '"1"' }],
    ['the version among others', { 'If-None-Match': 'W/"7", W/"1"' }],
    ['any version', { 'If-None-Match': '*' }],
    ['its last update', () => ({ 'If-Modified-Since': lastModified })],
    ['a later date', { 'If-Modified-Since': 'Fri, 01 Jan 2100 00:00:00 GMT' }],
  ])('answers 304 without a body when the request names %s', async (_what, headers) => {
    const response = await read(typeof headers === 'function' ? headers() : headers);
    expect(response.status).toBe(304);
    expect(await response.text()).toBe('');
    expect(response.headers.get('etag')).toBe('W/"1"');
  });

  it.each([
    ['another version', { 'If-None-Match': 'W/"2"' }],
    ['an earlier date', { 'If-Modified-Since': 'Thu, 01 Jan 2015 00:00:00 GMT' }],
    ['an unreadable date', { 'If-Modified-Since': 'yesterday' }],
    // If-None-Match decides when both are sent (RFC 9110 §13.2.2).
    [
      'another version and a later date',
      { 'If-None-Match': 'W/"2"', 'If-Modified-Since': 'Fri, 01 Jan 2100 00:00:00 GMT' },
    ],
  ])('answers the resource when the request names %s', async (_what, headers) => {
    const response = await read(headers);
    expect(response.status).toBe(200);
    expect((await response.json()).id).toBe(id);
  });

  it('answers a version read the same way', async () => {
    expect((await read({ 'If-None-Match': 'W/"1"' }, `/Patient/${id}/_history/1`)).status).toBe(
      304,
    );
  });

  it('answers the new version once the resource changed', async () => {
    const updated = await server.fhir(`/Patient/${id}`, {
      method: 'PUT',
      body: { resourceType: 'Patient', id, name: [{ family: 'Changed' }] },
    });
    expect(updated.status).toBe(200);
    const response = await read({ 'If-None-Match': 'W/"1"' });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe('W/"2"');
    expect((await response.json()).name[0].family).toBe('Changed');
  });

  it('still refuses a request without a token, and a resource of another project', async () => {
    expect(
      (await server.fhir(`/Patient/${id}`, { token: null, headers: { 'If-None-Match': '*' } }))
        .status,
    ).toBe(401);
    const other = await server.createProject('Elsewhere');
    const response = await server.fhir(`/Patient/${id}`, {
      token: other.token,
      headers: { 'If-None-Match': '*' },
    });
    expect(response.status).toBe(404);
  });

  it('is declared in the CapabilityStatement', async () => {
    const statement = await (await server.fhir('/metadata', { token: null })).json();
    const patient = statement.rest[0].resource.find((r: { type: string }) => r.type === 'Patient');
    expect(patient.conditionalRead).toBe('full-support');
  });
});

describe('conditional read in a Bundle', () => {
  const bundle = (type: 'batch' | 'transaction', entry: object[]) =>
    server.fhir('/', { method: 'POST', body: { resourceType: 'Bundle', type, entry } });

  it.each(['batch', 'transaction'] as const)(
    'answers a %s GET entry 304 when its conditions name the current version, with etag and lastModified always',
    async (type) => {
      const current = await (await server.fhir(`/Patient/${id}`)).json();
      const response = await bundle(type, [
        {
          request: {
            method: 'GET',
            url: `Patient/${id}`,
            ifNoneMatch: `W/"${current.meta.versionId}"`,
          },
        },
        { request: { method: 'GET', url: `Patient/${id}`, ifNoneMatch: 'W/"999"' } },
        {
          request: {
            method: 'GET',
            url: `Patient/${id}`,
            ifModifiedSince: '2100-01-01T00:00:00Z',
          },
        },
        { request: { method: 'GET', url: `Patient/${id}` } },
      ]);
      expect(response.status).toBe(200);
      const entries = (await response.json()).entry;
      const version = {
        etag: `W/"${current.meta.versionId}"`,
        lastModified: current.meta.lastUpdated,
      };
      expect(entries[0]).toEqual({ response: { status: '304 Not Modified', ...version } });
      expect(entries[1].response).toEqual({ status: '200 OK', ...version });
      expect(entries[1].resource.id).toBe(id);
      expect(entries[2]).toEqual({ response: { status: '304 Not Modified', ...version } });
      expect(entries[3].response).toEqual({ status: '200 OK', ...version });
    },
  );

  it('refuses read conditions on a search entry (that entry in a batch, the whole transaction), and ones not written as text', async () => {
    const searchEntry = {
      request: { method: 'GET', url: 'Patient?name=changed', ifNoneMatch: 'W/"1"' },
    };
    const batch = await bundle('batch', [
      searchEntry,
      { request: { method: 'GET', url: `Patient/${id}` } },
    ]);
    expect(batch.status).toBe(200);
    const entries = (await batch.json()).entry;
    expect(entries[0].response.status).toBe('400');
    expect(JSON.stringify(entries[0].response.outcome)).toContain('apply to reads (Type/id)');
    expect(entries[1].response.status).toBe('200 OK');
    const transaction = await bundle('transaction', [
      searchEntry,
      {
        request: { method: 'POST', url: 'Patient' },
        resource: { resourceType: 'Patient', name: [{ family: 'NotStored' }] },
      },
    ]);
    expect(transaction.status).toBe(400);
    const notText = await bundle('transaction', [
      { request: { method: 'GET', url: `Patient/${id}`, ifNoneMatch: 1 } },
    ]);
    expect(notText.status).toBe(400);
    expect(JSON.stringify(await notText.json())).toContain('request.ifNoneMatch must be a string');
    const stored = await (await server.fhir('/Patient?name=notstored')).json();
    expect(stored.total).toBe(0);
  });
});

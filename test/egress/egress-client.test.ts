import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressClient } from '../../runtime/egress/egress-client.js';
import { EgressPolicy } from '../../runtime/egress/egress-policy.js';

/** Why a fetch failed: the message of its `cause`. */
async function failure(response: Promise<Response>): Promise<string> {
  const error = await response.then(
    () => undefined,
    (thrown: unknown) => thrown as Error & { cause?: Error },
  );
  expect(error).toBeInstanceOf(TypeError);
  expect(error!.message).toBe('fetch failed');
  return error!.cause!.message;
}

describe('EgressClient', () => {
  let server: Server;
  let port: number;
  let requests = 0;
  const allowed = new EgressClient(EgressPolicy.parse('127.0.0.1'));
  const byDefault = new EgressClient();

  beforeAll(async () => {
    server = createServer((request, response) => {
      requests++;
      const hop = /^\/to\/(.+)$/.exec(request.url ?? '');
      if (hop) response.writeHead(302, { location: `http://${hop[1]}:${port}/` }).end();
      else response.end(`hello from ${request.headers.host}`);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server?.close();
    await allowed.close();
    await byDefault.close();
  });

  it('uses an undici of the major version of Node’s own fetch', () => {
    // Resolved as the client resolves it.
    const require = createRequire(new URL('../../runtime/egress/', import.meta.url));
    const manifest = require.resolve('undici/package.json');
    const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
    expect(version.split('.')[0]).toBe(process.versions.undici!.split('.')[0]);
  });

  it('connects to an allowed address, by address and by a name that resolves to it', async () => {
    const direct = await allowed.fetch(`http://127.0.0.1:${port}/`);
    expect(await direct.text()).toBe(`hello from 127.0.0.1:${port}`);
    const named = await allowed.fetch(`http://localhost:${port}/`);
    expect(await named.text()).toBe(`hello from localhost:${port}`);
  });

  it('refuses loopback by default, before connecting', async () => {
    const before = requests;
    expect(await failure(byDefault.fetch(`http://127.0.0.1:${port}/`))).toBe(
      '127.0.0.1 is a loopback address, which GRAPHIR_EGRESS_ALLOW does not allow',
    );
    expect(await failure(byDefault.fetch(`http://localhost:${port}/`))).toMatch(
      /^localhost resolves to (127\.0\.0\.1|::1), a loopback address, which GRAPHIR_EGRESS_ALLOW does not allow$/,
    );
    expect(await failure(byDefault.fetch(`http://[::ffff:127.0.0.1]:${port}/`))).toContain(
      'a loopback address',
    );
    expect(requests).toBe(before);
  });

  it('checks each redirect hop', async () => {
    const followed = await allowed.fetch(`http://127.0.0.1:${port}/to/127.0.0.1`);
    expect(followed.redirected).toBe(true);
    expect(await followed.text()).toBe(`hello from 127.0.0.1:${port}`);
    expect(await failure(allowed.fetch(`http://127.0.0.1:${port}/to/127.0.0.2`))).toBe(
      '127.0.0.2 is a loopback address, which GRAPHIR_EGRESS_ALLOW does not allow',
    );
  });

  it('allows a host the policy names, whatever it resolves to', async () => {
    const client = new EgressClient(EgressPolicy.parse('localhost'));
    try {
      expect((await client.fetch(`http://localhost:${port}/`)).status).toBe(200);
      expect(await failure(client.fetch(`http://127.0.0.1:${port}/`))).toContain('loopback');
    } finally {
      await client.close();
    }
  });

  it('refuses cloud metadata, link-local and private addresses without a packet sent', async () => {
    // Refused before any connection: nothing is sent to these addresses.
    for (const [url, kind] of [
      ['http://169.254.169.254/latest/meta-data/', 'a cloud metadata address'],
      ['http://[fd00:ec2::254]/', 'a cloud metadata address'],
      ['http://169.254.10.10/', 'a link-local address'],
      ['http://10.0.0.1/', 'a private address'],
      ['http://0.0.0.0/', 'an unspecified address'],
    ]) {
      expect(await failure(allowed.fetch(url))).toContain(kind);
    }
  });
});

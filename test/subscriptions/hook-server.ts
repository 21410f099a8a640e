/** A loopback HTTP server standing for rest-hook endpoints: it records what it receives. */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Received {
  readonly path: string;
  readonly method: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

export interface HookServer {
  /** `http://127.0.0.1:port`. */
  readonly url: string;
  readonly received: Received[];
  /** Requests received on `path`. */
  on(path: string): Received[];
  /** The most requests with one delivery key (HookOptions) it held at once. */
  readonly maxConcurrent: number;
  /** Waits until `path` has received `count` requests; fails after `timeoutMs`. */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export interface HookOptions {
  /** Which delivery a request is, for `maxConcurrent`; by default its path. */
  readonly deliveryKey?: (received: Received) => string;
}

/**
 * Answers 200, or the status a path names (`/status/500/…` answers 500), after the delay it
 * names (`/delay/3000/…` answers 3 s after the request came).
 */
export async function startHookServer({
  deliveryKey = (r) => r.path,
}: HookOptions = {}): Promise<HookServer> {
  const received: Received[] = [];
  const holding = new Map<string, number>();
  let maxConcurrent = 0;
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const path = request.url ?? '/';
    const entry = {
      path,
      method: request.method ?? '',
      headers: request.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    };
    received.push(entry);
    const key = deliveryKey(entry);
    holding.set(key, (holding.get(key) ?? 0) + 1);
    maxConcurrent = Math.max(maxConcurrent, holding.get(key)!);
    const delay = /^\/delay\/(\d+)\//.exec(path)?.[1];
    if (delay) await sleep(Number(delay));
    holding.set(key, holding.get(key)! - 1);
    const status = /^\/status\/(\d{3})\//.exec(path)?.[1];
    if (!response.destroyed) response.writeHead(status ? Number(status) : 200).end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const on = (path: string) => received.filter((r) => r.path === path);
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    get maxConcurrent() {
      return maxConcurrent;
    },
    on,
    async waitFor(path, count, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (on(path).length < count) {
        if (Date.now() > deadline)
          throw new Error(`${path} received ${on(path).length} of ${count} in ${timeoutMs} ms`);
        await sleep(25);
      }
      return on(path);
    },
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

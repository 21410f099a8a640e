/**
 * The HTTP load generator, run as its own process (bench/load-client.ts forks it) so that the
 * server under test has its event loop, and one of the machine's cores, to itself. It takes a
 * job over IPC, sends `count` requests from `concurrency` keep-alive connections (after a
 * warm-up over all of them), checks every status, and answers with the latencies.
 */
import type { LoadJob, LoadResult } from './load-client.js';
import { cpuPerRequest, threadCpu } from './thread-cpu.js';
import { HttpLoadConnection, requestBytes } from './http-load-connection.js';

process.on('message', (job: LoadJob) => {
  run(job).then(
    (result) => process.send!(result),
    (error: Error) => process.send!({ error: error.message } satisfies LoadResult),
  );
});

async function run(job: LoadJob): Promise<LoadResult> {
  const url = new URL(job.url);
  const prepared = job.requests.map((request) => ({ request, bytes: requestBytes(url, request) }));
  const connections = Array.from({ length: job.concurrency }, () => new HttpLoadConnection(url));
  let next = 0;
  const send = async (connection: HttpLoadConnection) => {
    const { request, bytes } = prepared[next++ % prepared.length];
    const { status, body } = await connection.send(bytes);
    if (status !== (request.status ?? 200) || (request.refuse && body.includes(request.refuse))) {
      throw new Error(
        `${request.method} ${request.path} → ${status}: ${body.toString('utf8', 0, 300)}`,
      );
    }
  };
  /** `count` requests from every connection at once, each connection one at a time. */
  const sendAll = async (count: number, latencies?: number[]) => {
    let remaining = count;
    await Promise.all(
      connections.map(async (connection) => {
        while (remaining-- > 0) {
          const t0 = performance.now();
          await send(connection);
          latencies?.push(performance.now() - t0);
        }
      }),
    );
  };
  try {
    // Over every connection: a server of several processes gets each connection's requests in
    // one of them, so each process warms up.
    await sendAll(job.warmup);
    const latencies: number[] = [];
    // Read here, around the timed requests only, so the warm-up's CPU is not counted.
    const cpuBefore = job.serverPid === undefined ? undefined : threadCpu(job.serverPid);
    const started = performance.now();
    await sendAll(job.count, latencies);
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuBefore && cpuPerRequest(cpuBefore, threadCpu(job.serverPid!), job.count);
    return { latencies, seconds, cpu };
  } finally {
    for (const connection of connections) connection.close();
  }
}

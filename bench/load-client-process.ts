/**
 * The HTTP load generator, run as its own process (bench/load-client.ts forks it) so that the
 * server under test has its event loop, and one of the machine's cores, to itself. It takes a
 * job over IPC, sends `count` requests from `concurrency` loops over keep-alive connections
 * (after a warm-up), checks every status, and answers with the latencies.
 */
import http from 'node:http';
import type { LoadJob, LoadResult } from './load-client.js';
import { cpuPerRequest, threadCpu } from './thread-cpu.js';

process.on('message', (job: LoadJob) => {
  run(job).then(
    (result) => process.send!(result),
    (error: Error) => process.send!({ error: error.message } satisfies LoadResult),
  );
});

async function run(job: LoadJob): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.concurrency });
  const url = new URL(job.url);
  let next = 0;
  const send = () => {
    const request = job.requests[next++ % job.requests.length];
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    return new Promise<void>((resolve, reject) => {
      const outgoing = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method: request.method,
          path: url.pathname.replace(/\/$/, '') + request.path,
          headers: {
            ...request.headers,
            ...(body ? { 'Content-Length': String(body.length) } : {}),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const status = response.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString();
            if (
              status !== (request.status ?? 200) ||
              (request.refuse && text.includes(request.refuse))
            )
              reject(
                new Error(`${request.method} ${request.path} → ${status}: ${text.slice(0, 300)}`),
              );
            else resolve();
          });
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  };
  for (let i = 0; i < job.warmup; i++) await send();
  const latencies: number[] = [];
  let remaining = job.count;
  // Read here, around the timed requests only, so the warm-up's CPU is not counted.
  const cpuBefore = job.serverPid === undefined ? undefined : threadCpu(job.serverPid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (remaining-- > 0) {
        const t0 = performance.now();
        await send();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuBefore && cpuPerRequest(cpuBefore, threadCpu(job.serverPid!), job.count);
  agent.destroy();
  return { latencies, seconds, cpu };
}

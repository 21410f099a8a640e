/**
 * `GET /metrics` of a server run as several processes on one port (runtime/server/serve.ts): a
 * scrape reaches whichever process the connection landed on, and answers for all of them, as one
 * server. The process asks the supervisor, which collects every process's registry over the
 * cluster's IPC channel and merges them with prom-client's AggregatorRegistry: counters and
 * histograms summed, gauges by each metric's `aggregator` (summed unless it says otherwise).
 */
import cluster, { type Worker } from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry, type Registry } from 'prom-client';

const REQUEST = 'graphir:metrics-request';
const ANSWER = 'graphir:metrics-answer';
/** prom-client gives up on a process that does not answer after 5 s; a little more here. */
const ANSWER_TIMEOUT_MS = 6_000;

interface MetricsRequest {
  readonly type: typeof REQUEST;
  readonly id: string;
}

interface MetricsAnswer {
  readonly type: typeof ANSWER;
  readonly id: string;
  readonly text?: string;
  readonly error?: string;
}

/** In the supervisor: answers each process's request with every process's metrics merged. */
export function answerMetricsRequests(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker: Worker, message: Partial<MetricsRequest>) => {
    if (message?.type !== REQUEST) return;
    const reply = (answer: Omit<MetricsAnswer, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: ANSWER, id: message.id, ...answer });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: unknown) => reply({ error: String((error as Error)?.message ?? error) }),
    );
  });
}

/**
 * In a server process under the supervisor: `registry` is what this process adds to the merged
 * metrics, and the function returned fetches them.
 */
export function clusterExposition(registry: Registry): () => Promise<string> {
  // Constructing one installs prom-client's answer to the supervisor's collection requests.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  const pending = new Map<string, { resolve(text: string): void; reject(error: Error): void }>();
  process.on('message', (message: Partial<MetricsAnswer>) => {
    if (message?.type !== ANSWER || !message.id) return;
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.text !== undefined) waiting?.resolve(message.text);
    else waiting?.reject(new Error(`metrics of the other processes: ${message.error}`));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = randomUUID();
      const timeout = setTimeout(() => {
        pending.delete(id);
        reject(new Error('the supervisor did not answer with the processes’ metrics'));
      }, ANSWER_TIMEOUT_MS);
      pending.set(id, {
        resolve: (text) => (clearTimeout(timeout), resolve(text)),
        reject: (error) => (clearTimeout(timeout), reject(error)),
      });
      process.send!({ type: REQUEST, id } satisfies MetricsRequest);
    });
}

/**
 * `npm run bench:graphql -- --processes 1,2`: the same server with each number of processes
 * (`GRAPHIR_PROCESSES`) on PostgreSQL, side by side: each started as `npm start` starts it, on a
 * database of its own loaded with the same synthetic data set, and all kept running. Then Q1
 * (GraphQL `Patient(id:)`) and a REST read by id (`GET Patient/{id}`) at concurrency 16, the
 * servers measured in ABBA order (A B B A, repeated), since a shared machine drifts; medians of
 * the rounds, with where the machine's CPU went during them (cpu-shares.ts).
 */
import type { BenchServer } from './bench-server.js';
import { startBenchServer } from './bench-server.js';
import { QUERIES, type Ids } from './graphql-query-set.js';
import type { LoadClient, LoadRequest } from './load-client.js';
import { cpuShares, formatShares, readCpu, type CpuShares } from './cpu-shares.js';
import { percentile } from './measure.js';

const CONCURRENCY = 16;
/** ABBA blocks: each server is measured twice per block. */
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 3);

export interface ScalingDeps {
  readonly client: LoadClient;
  readonly requests: number;
  readonly warmup: number;
  /** Loads the data set through `server`; the ids it holds. */
  load(server: BenchServer): Promise<Ids>;
  graphqlRequest(
    server: BenchServer,
    query: string,
    variables: Record<string, unknown>,
  ): LoadRequest;
}

interface Measured {
  readonly rps: number[];
  readonly p50: number[];
  readonly cpu: CpuShares[];
}

export async function compareProcesses(
  counts: readonly number[],
  deps: ScalingDeps,
): Promise<void> {
  const servers: { processes: number; server: BenchServer; ids: Ids }[] = [];
  try {
    for (const processes of counts) {
      const server = await startBenchServer('postgres', { GRAPHIR_PROCESSES: String(processes) });
      servers.push({ processes, server, ids: await deps.load(server) });
    }
    const workloads = {
      'Q1 (GraphQL Patient(id:))': (server: BenchServer, ids: Ids) =>
        Array.from({ length: 200 }, (_, i) => deps.graphqlRequest(server, ...QUERIES.Q1(ids, i))),
      'REST GET Patient/{id}': (server: BenchServer, ids: Ids) =>
        ids.patients.slice(0, 200).map((id): LoadRequest => ({
          method: 'GET',
          path: `/fhir/R4/Patient/${id}`,
          headers: { Authorization: `Bearer ${server.token}` },
        })),
    };
    const results = new Map<string, Measured>();
    const measure = async (index: number, name: keyof typeof workloads, count: number) => {
      const { server, ids } = servers[index];
      return deps.client.measure({
        url: server.url,
        requests: workloads[name](server, ids),
        count,
        concurrency: CONCURRENCY,
      });
    };
    for (const name of Object.keys(workloads) as (keyof typeof workloads)[]) {
      for (let index = 0; index < servers.length; index++) await measure(index, name, deps.warmup);
      const order = abba(servers.length, BLOCKS);
      for (const index of order) {
        const before = readCpu();
        const figures = await measure(index, name, deps.requests);
        const cpu = cpuShares(before, readCpu(), [servers[index].server.pid]);
        const key = `${name}|${index}`;
        const measured = results.get(key) ?? { rps: [], p50: [], cpu: [] };
        measured.rps.push(figures.rps);
        measured.p50.push(figures.p50);
        measured.cpu.push(cpu);
        results.set(key, measured);
      }
      for (let index = 0; index < servers.length; index++) {
        const { rps, p50, cpu } = results.get(`${name}|${index}`)!;
        const median = (values: number[]) => percentile(values, 50);
        const shares = Object.fromEntries(
          (Object.keys(cpu[0]) as (keyof CpuShares)[]).map((key) => [
            key,
            median(cpu.map((round) => round[key])),
          ]),
        ) as unknown as CpuShares;
        console.log(
          `postgres c=${CONCURRENCY} ${name}, ${servers[index].processes} process(es): ${median(rps).toFixed(0)} req/s, p50 ${median(p50).toFixed(2)} ms (medians of ${rps.length} rounds; req/s ${rps.map((value) => value.toFixed(0)).join(', ')}); ${formatShares(shares)}`,
        );
      }
    }
  } finally {
    for (const { server } of servers) await server.stop();
  }
}

/** Server indexes in ABBA order: 0 1 1 0 for two, 0 1 2 2 1 0 for three; `blocks` times. */
function abba(servers: number, blocks: number): number[] {
  const forward = Array.from({ length: servers }, (_, i) => i);
  return Array.from({ length: blocks }, () => [...forward, ...[...forward].reverse()]).flat();
}

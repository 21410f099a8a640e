/**
 * Where a machine's CPU went between two readings (Linux /proc): the server's processes (a
 * process and its descendants, cluster workers among them), PostgreSQL's, the bench's own (this
 * process and its children, the load client among them), everything else, and idle time; in
 * cores, so that on two cores the five add up to about 2. It shows whether a server had a core
 * to spare: what `--processes` needs to scale.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS = 100;

interface Reading {
  readonly at: number;
  readonly idleTicks: number;
  /** Ticks of each process: utime + stime. */
  readonly ticks: Map<
    number,
    { readonly comm: string; readonly ppid: number; readonly ticks: number }
  >;
}

export interface CpuShares {
  readonly server: number;
  readonly postgres: number;
  readonly bench: number;
  readonly other: number;
  readonly idle: number;
}

export function readCpu(): Reading {
  const ticks = new Map<number, { comm: string; ppid: number; ticks: number }>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // The process ended after the directory was listed.
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'.
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    const fields = text.slice(close + 2).split(' ');
    ticks.set(Number(name), {
      comm,
      ppid: Number(fields[1]),
      ticks: Number(fields[11]) + Number(fields[12]),
    });
  }
  const total = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  // idle and iowait
  return { at: performance.now(), idleTicks: total[3] + total[4], ticks };
}

/** Cores used on average between `before` and `after`, by whom; `serverPids`: the servers' roots. */
export function cpuShares(
  before: Reading,
  after: Reading,
  serverPids: readonly number[],
): CpuShares {
  const seconds = (after.at - before.at) / 1000;
  const isUnder = (pid: number, roots: readonly number[]): boolean => {
    for (let at = pid, hops = 0; at > 1 && hops < 64; hops++) {
      if (roots.includes(at)) return true;
      at = after.ticks.get(at)?.ppid ?? before.ticks.get(at)?.ppid ?? 0;
    }
    return false;
  };
  const shares = { server: 0, postgres: 0, bench: 0, other: 0 };
  for (const [pid, { comm, ticks }] of after.ticks) {
    // A process that started between the readings counts from zero.
    const used = (ticks - (before.ticks.get(pid)?.ticks ?? 0)) / TICKS / seconds;
    if (isUnder(pid, serverPids)) shares.server += used;
    else if (comm.startsWith('postgres')) shares.postgres += used;
    else if (isUnder(pid, [process.pid])) shares.bench += used;
    else shares.other += used;
  }
  const idle = Math.min(cpus().length, (after.idleTicks - before.idleTicks) / TICKS / seconds);
  return { ...shares, idle };
}

export function formatShares(shares: CpuShares): string {
  const cores = (value: number) => value.toFixed(2);
  return `cores: server ${cores(shares.server)}, PostgreSQL ${cores(shares.postgres)}, bench ${cores(shares.bench)}, other ${cores(shares.other)}, idle ${cores(shares.idle)}`;
}

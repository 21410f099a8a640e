/**
 * CPU time of a process's threads (Linux), from /proc/<pid>/task/<tid>/schedstat, whose first
 * field is nanoseconds on a CPU. /proc/<pid>/stat counts clock ticks (100 Hz here): over the
 * 2,000 requests of a bench round it cannot tell 0.05 ms a request from 0.1.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Milliseconds of CPU: the process's main thread, and all its other threads together. */
export interface ThreadCpu {
  readonly main: number;
  readonly others: number;
}

export function threadCpu(pid: number): ThreadCpu {
  let main = 0;
  let others = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8');
    } catch {
      continue; // The thread ended after the directory was listed.
    }
    const nanoseconds = Number(text.split(' ')[0]);
    if (Number(tid) === pid) main += nanoseconds;
    else others += nanoseconds;
  }
  return { main: main / 1e6, others: others / 1e6 };
}

/**
 * The CPU between two readings, per request. A thread that ended between them takes its time
 * with it: the benches' servers keep their threads, so that does not arise there.
 */
export function cpuPerRequest(before: ThreadCpu, after: ThreadCpu, requests: number): ThreadCpu {
  return {
    main: (after.main - before.main) / requests,
    others: (after.others - before.others) / requests,
  };
}

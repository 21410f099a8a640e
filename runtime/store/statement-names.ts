/**
 * Names of prepared statements: which statement texts are kept prepared on each connection (or in
 * PGlite's one session), so that running one again skips parsing and planning. Fixed texts are
 * named at once; texts shaped by requests from their RECURRING_AFTER-th run, and never more than
 * MAX_RECURRING of them: a prepared statement stays in its connection for good, so clients must
 * not be able to grow the set without end.
 */
import { createHash } from 'node:crypto';

/** Recurring texts kept prepared at most; each connection prepares those it runs. */
export const MAX_RECURRING = 200;
/** Runs of a recurring text before it is prepared: one-off shapes are never kept. */
export const RECURRING_AFTER = 3;
/** Recurring texts not (yet) prepared, with their runs so far: at most this many are counted. */
const MAX_COUNTED = 1000;

const statementNames = new Map<string, string>();
const recurringRuns = new Map<string, number>();
let recurringPrepared = 0;

/** A prepared statement's name, the same for the same text on every connection. */
export function statementName(text: string, kind: 'fixed' | 'recurring'): string | undefined {
  const known = statementNames.get(text);
  if (known) return known;
  if (kind === 'recurring') {
    if (recurringPrepared >= MAX_RECURRING) return undefined;
    const runs = (recurringRuns.get(text) ?? 0) + 1;
    if (runs < RECURRING_AFTER) {
      if (recurringRuns.size >= MAX_COUNTED) recurringRuns.clear();
      recurringRuns.set(text, runs);
      return undefined;
    }
    recurringRuns.delete(text);
    recurringPrepared++;
  }
  const name = `graphir_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
  statementNames.set(text, name);
  return name;
}

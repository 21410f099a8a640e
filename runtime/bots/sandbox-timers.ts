/**
 * The timers of one bot execution (`setTimeout`, `setInterval`): each holds the isolate's
 * callback until it is due. The worker's settle loop (sandbox-isolate.ts) fires those due, in
 * the order they are due (and created), and otherwise waits for the earliest or a host reply;
 * the bot's deadline bounds them all, and what is pending when the handler settles is dropped.
 */

/** Timers one execution may have pending: a loop that makes them without end fails early. */
export const MAX_TIMERS = 10_000;
/** Node's bounds: a delay under 1 ms or over 2^31 - 1 ms is 1 ms. */
const MIN_DELAY_MS = 1;
const MAX_DELAY_MS = 2 ** 31 - 1;

export interface Timer<Callback> {
  readonly id: number;
  readonly callback: Callback;
  /** Milliseconds between runs of an interval; undefined for a timeout. */
  readonly interval: number | undefined;
  due: number;
  /** Creation order, to fire timers due at the same time in that order. */
  sequence: number;
}

export class SandboxTimers<Callback> {
  private readonly pending = new Map<number, Timer<Callback>>();
  private nextId = 1;
  private nextSequence = 0;

  /** `release` frees a callback no timer holds any more. */
  constructor(private readonly release: (callback: Callback) => void) {}

  get size(): number {
    return this.pending.size;
  }

  /**
   * Adds a timer due after `delay` ms, which holds `callback` from now on; when MAX_TIMERS are
   * pending, releases it and throws.
   */
  add(callback: Callback, delay: number, repeat: boolean): number {
    if (this.pending.size >= MAX_TIMERS) {
      this.release(callback);
      throw new RangeError(`More than ${MAX_TIMERS} timers pending`);
    }
    const ms = delayOf(delay);
    const id = this.nextId++;
    this.pending.set(id, {
      id,
      callback,
      interval: repeat ? ms : undefined,
      due: Date.now() + ms,
      sequence: this.nextSequence++,
    });
    return id;
  }

  clear(id: number): void {
    const timer = this.pending.get(id);
    if (!timer) return;
    this.pending.delete(id);
    this.release(timer.callback);
  }

  /** When the earliest timer is due, if any is pending. */
  nextDue(): number | undefined {
    return this.earliest()?.due;
  }

  /**
   * The earliest timer if it is due by `now`: a timeout is removed (the caller releases its
   * callback once run), an interval rescheduled.
   */
  takeDue(now: number): Timer<Callback> | undefined {
    const timer = this.earliest();
    if (!timer || timer.due > now) return undefined;
    if (timer.interval === undefined) {
      this.pending.delete(timer.id);
    } else {
      timer.due = now + timer.interval;
      timer.sequence = this.nextSequence++;
    }
    return timer;
  }

  /** Whether `timer` is still pending (an interval not cleared by its own callback). */
  has(timer: Timer<Callback>): boolean {
    return this.pending.get(timer.id) === timer;
  }

  /** Drops every timer, releasing their callbacks. */
  drop(): void {
    for (const timer of this.pending.values()) this.release(timer.callback);
    this.pending.clear();
  }

  private earliest(): Timer<Callback> | undefined {
    let earliest: Timer<Callback> | undefined;
    for (const timer of this.pending.values()) {
      if (
        !earliest ||
        timer.due < earliest.due ||
        (timer.due === earliest.due && timer.sequence < earliest.sequence)
      ) {
        earliest = timer;
      }
    }
    return earliest;
  }
}

function delayOf(delay: number): number {
  const ms = Math.trunc(Number(delay));
  return ms >= MIN_DELAY_MS && ms <= MAX_DELAY_MS ? ms : MIN_DELAY_MS;
}

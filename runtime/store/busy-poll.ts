/**
 * While a statement is out at PostgreSQL, the event loop keeps turning (an empty immediate at a
 * time) for up to a set time, instead of sleeping until the reply arrives. A thread that sleeps
 * for the 0.1 ms a statement takes on the same host is woken again when the reply comes, and on a
 * virtual machine waking an idle virtual CPU costs about as much as the statement. Linux's
 * SO_BUSY_POLL does the same for network cards, but not for loopback connections. Measured at
 * concurrency 1, alternating runs with GRAPHIR_BUSY_POLL_MICROSECONDS 500 and 0: bench Q5 (four
 * statements) 0.98–1.00 → 0.83–0.85 ms, Q2 0.54–0.55 → 0.48, Q6 0.44 → 0.37; at concurrency 16,
 * where the loop seldom idles, no change.
 *
 * The cost is a core kept busy while statements are out, at most `microseconds` past the last
 * one sent; 0 turns it off (a database across a network, whose round trip dwarfs a wake-up).
 * Polling the same way for bot runs in the sandbox workers was tried and not kept: the polling
 * thread took the core a worker needed to prepare its next isolate (HL7 `buildAck()` on PGlite
 * 1.5 → 2.3 ms).
 */
import { LoopPoll } from '../loop-poll.js';

export class BusyPoll {
  private inFlight = 0;
  private readonly loop = new LoopPoll(() => this.inFlight > 0);

  constructor(private readonly microseconds: number) {}

  /** Call as a statement is sent; call what it returns once, when its reply (or error) is in. */
  begin(): () => void {
    this.inFlight++;
    if (this.microseconds > 0) this.loop.extend(this.microseconds / 1000);
    return () => {
      this.inFlight--;
    };
  }
}

/**
 * While a statement is out at PostgreSQL, the event loop keeps turning (an empty immediate at a
 * time) for up to a set time, instead of sleeping until the reply arrives. A thread that sleeps
 * for the 0.1 ms a statement takes on the same host is woken again when the reply comes, and on
 * a virtual machine waking an idle virtual CPU costs about as much as the statement: bench Q1 on
 * PostgreSQL at concurrency 1 went 0.43 → 0.37–0.39 ms, Q4 (two statements) 0.65–0.67 → 0.55,
 * Q5 (four) 0.94–0.98 → 0.81, with no change at concurrency 16, where the loop seldom idles.
 * Linux's SO_BUSY_POLL does the same for network cards, but not for loopback connections.
 *
 * The cost is a core kept busy while statements are out, at most `microseconds` past the last
 * one sent: 0 turns it off, for a database across a network, whose round trip dwarfs a wake-up.
 */
export class BusyPoll {
  private inFlight = 0;
  private until = 0;
  private polling = false;

  constructor(private readonly microseconds: number) {
    if (!Number.isSafeInteger(microseconds) || microseconds < 0) {
      throw new RangeError(
        `DATABASE_BUSY_POLL_MICROSECONDS must be a whole number ≥ 0, got ${microseconds}`,
      );
    }
  }

  /** Call as a statement is sent; call what it returns once, when its reply (or error) is in. */
  begin(): () => void {
    this.inFlight++;
    if (this.microseconds > 0) {
      this.until = performance.now() + this.microseconds / 1000;
      if (!this.polling) {
        this.polling = true;
        setImmediate(this.poll);
      }
    }
    return () => {
      this.inFlight--;
    };
  }

  private readonly poll = (): void => {
    if (this.inFlight > 0 && performance.now() < this.until) setImmediate(this.poll);
    else this.polling = false;
  };
}

/**
 * Keeps the event loop turning, an empty immediate at a time, instead of letting it sleep in
 * epoll, until a set time has passed or `wanted()` says to stop. On a virtual machine a sleeping
 * thread is woken on a CPU gone idle, which costs about as much as a small statement: why and
 * when to pay for polling instead is in store/busy-poll.ts (while PostgreSQL answers) and
 * http/idle-poll.ts (between requests).
 */
export class LoopPoll {
  private until = 0;
  private polling = false;

  constructor(private readonly wanted: () => boolean) {}

  /** Polls until `ms` from now. */
  extend(ms: number): void {
    this.until = performance.now() + ms;
    if (!this.polling) {
      this.polling = true;
      setImmediate(this.poll);
    }
  }

  private readonly poll = (): void => {
    if (this.wanted() && performance.now() < this.until) setImmediate(this.poll);
    else this.polling = false;
  };
}

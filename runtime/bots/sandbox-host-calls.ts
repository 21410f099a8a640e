/**
 * The `fhir` calls of one bot execution on their way to the main thread, which runs them against
 * the store. One execution is one HTTP request: it must not take over the server's thread and its
 * database with hundreds of writes at once, so only a few run at a time and the rest wait here;
 * and their arguments, which live outside QuickJS's heap (here and on the main thread), count
 * against the bot's memory limit.
 */

/** Sends `fhir.<method>` to the main thread; resolves to the reply JSON, never rejects. */
export type HostCaller = (method: string, argsJson: string) => Promise<string>;

/** Concurrent `fhir` calls one execution may have in flight. */
const MAX_IN_FLIGHT = 256;
/** Of those, how many the main thread runs at once; the others wait, and are dropped if the bot ends first. */
const AT_ONCE = 4;
/**
 * The bot's `fetch` requests in flight at once, as a browser's connections to one host: they
 * wait on other servers, not on the database, so they have a lane of their own and hold back no
 * `fhir` call (nor `fhir` calls them).
 */
const FETCHES_AT_ONCE = 6;

/** Calls of one kind: how many run, and those waiting for a place. */
class Lane {
  running = 0;
  readonly waiting: (() => void)[] = [];
  constructor(readonly atOnce: number) {}
}

export class HostCallQueue<Call> {
  /** Calls sent or waiting, each settled by its reply unless dropped first. */
  private readonly inFlight = new Set<Call>();
  /** `fhir` calls, and the bot's `fetch` requests. */
  private readonly lanes = { fhir: new Lane(AT_ONCE), fetch: new Lane(FETCHES_AT_ONCE) };
  /** Characters of the arguments of calls sent or waiting. */
  private chars = 0;
  private exhausted = false;

  /**
   * `onReply` settles a call (in the isolate) with the main thread's reply; `onSettled` runs after
   * it, to wake whoever waits for replies.
   */
  constructor(
    private readonly callHost: HostCaller,
    private readonly memoryBytes: number,
    private readonly onReply: (call: Call, replyJson: string) => void,
    private readonly onSettled: () => void,
  ) {}

  /** Whether the calls' arguments went past the memory limit: the bot is to be stopped. */
  get overMemory(): boolean {
    return this.exhausted;
  }

  get size(): number {
    return this.inFlight.size;
  }

  /**
   * Queues `call`; throws when too many are in flight or their arguments are too large. A reply
   * that would take the bot past its memory limit with them stops the bot.
   */
  add(call: Call, method: string, argsJson: string): void {
    if (this.inFlight.size >= MAX_IN_FLIGHT)
      throw new Error(`More than ${MAX_IN_FLIGHT} fhir calls at once`);
    this.chars += argsJson.length;
    if (this.chars > this.memoryBytes) {
      this.exhausted = true;
      throw new Error('The bot ran past its memory limit');
    }
    this.inFlight.add(call);
    const lane = method === 'fetch' ? this.lanes.fetch : this.lanes.fhir;
    const send = () => {
      lane.running++;
      void this.callHost(method, argsJson).then((replyJson) => {
        lane.running--;
        lane.waiting.shift()?.();
        // The reply lives here until QuickJS parses it (into its own heap, which it counts): past
        // the limit, the bot is stopped, and the call is left for drop().
        if (this.chars + replyJson.length > this.memoryBytes) this.exhausted = true;
        this.chars -= argsJson.length;
        if (this.exhausted) {
          this.onSettled();
          return;
        }
        if (!this.inFlight.delete(call)) return;
        this.onReply(call, replyJson);
        this.onSettled();
      });
    };
    if (lane.running < lane.atOnce) send();
    else lane.waiting.push(send);
  }

  /** Forgets every call: replies that come later settle nothing. Returns those still unsettled. */
  drop(): Call[] {
    for (const lane of Object.values(this.lanes)) lane.waiting.length = 0;
    const calls = [...this.inFlight];
    this.inFlight.clear();
    return calls;
  }
}

/**
 * The shapes shared by the sandbox pool (main thread) and its workers. Only strings and plain
 * data cross the thread boundary: JSON values travel as JSON text, never as objects or functions.
 */

/** What one bot execution ended with; `durationMs` is measured on the main thread. */
export type SandboxResult = (
  | { status: 'ok'; value?: unknown; hl7?: string; console: string }
  | { status: 'error'; message: string; stack?: string; console: string }
  | { status: 'timeout'; console: string }
  | { status: 'memory'; console: string }
) & { durationMs: number };

/**
 * What an isolate is prepared with: a script, evaluated before the bot's code (scripts run in
 * order, after the lazy groups are defined); or a lazy group: `source` is an expression for a function
 * `(host) => ({ [global]: value, … })`, called on the first read of any of `globals`. Until a bot
 * reads one of them, a lazy group costs nothing, where a script costs its parsing in every
 * isolate (the Hl7Message class costs more to parse than a whole echo execution). Defining a
 * group's globals still costs a little in every isolate; a `deferred` group's are defined only
 * when the `fhir` client's code first loads, which uses them (bot-preludes.ts says for which bots).
 */
export type Prelude =
  | string
  | { readonly globals: readonly string[]; readonly source: string; readonly deferred?: boolean };

/** Runs one `fhir.<method>(...args)` call of a bot on the main thread. */
export type SandboxHost = (method: string, args: unknown[]) => Promise<unknown>;

export interface SandboxRequest {
  readonly code: string;
  readonly event: unknown;
  /**
   * What the isolate is prepared with before the bot's code (see `Prelude`): scripts and lazy
   * globals. Pass the same array each time: workers prepare isolates ahead for the array they
   * last saw.
   */
  readonly preludes?: readonly Prelude[];
  readonly timeoutMs: number;
  readonly memoryBytes: number;
  readonly host: SandboxHost;
  /**
   * How deep in a chain of bots calling bots (`fhir.executeBot`) this run is: 0 or absent for
   * one a client asked for. Each depth runs in workers of its own (sandbox-pool.ts).
   */
  readonly depth?: number;
}

/** main → worker: run a bot. */
export interface RunMessage {
  readonly type: 'run';
  readonly id: number;
  readonly code: string;
  readonly eventJson: string;
  /**
   * Absent when this worker was sent the preludes of `preludesKey` before: they are up to 12 KB,
   * and copying them to the worker for every run costs more than running an echo bot.
   */
  readonly preludes?: readonly Prelude[];
  /** The same number for the same preludes: a worker's prepared isolate fits when it matches. */
  readonly preludesKey: number;
  readonly timeoutMs: number;
  readonly memoryBytes: number;
}

/**
 * The answer to a host call, as JSON text the isolate parses itself:
 * `{"ok":true,"value":…}` or `{"ok":false,"message":"…","outcome":{…}}`.
 */
export interface HostReplyMessage {
  readonly type: 'host-reply';
  readonly id: number;
  readonly callId: number;
  readonly replyJson: string;
}

export type ToWorker = RunMessage | HostReplyMessage;

/**
 * What the isolate produced; the pool parses `valueJson` and adds `durationMs`. `stack`: the
 * stack of an error the bot threw, `Name: message` and QuickJS's frames (sandbox-failure.ts).
 */
export type WorkerOutcome =
  | { status: 'ok'; valueJson?: string; hl7?: string; console: string }
  | { status: 'error'; message: string; stack?: string; console: string }
  | { status: 'timeout'; console: string }
  | { status: 'memory'; console: string };

/** worker → main. */
export type FromWorker =
  /**
   * The worker takes a run now: first when its QuickJS module is loaded, then after each result,
   * once the isolate is freed and the next one prepared. `known`: the preludes keys it holds the
   * text of (it needs no copy); `prepared`: those it holds a prepared isolate for, so that a run
   * with one of them starts at once. `settledMs`: how long freeing the last isolate and preparing
   * the next took (absent on the first `ready`).
   */
  | {
      readonly type: 'ready';
      readonly known: readonly number[];
      readonly prepared: readonly number[];
      readonly settledMs?: number;
    }
  | {
      readonly type: 'host-call';
      readonly id: number;
      readonly callId: number;
      readonly method: string;
      readonly argsJson: string;
    }
  | {
      /** Sent before the isolate is freed: the caller need not wait for that. */
      readonly type: 'result';
      readonly id: number;
      readonly outcome: WorkerOutcome;
    };

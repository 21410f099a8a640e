/**
 * What the worker gives the isolate's own code (never the bot's): during preparation the global
 * `__graphirHost`, deleted before the bot's code runs; a lazy group's factory gets it as its
 * argument.
 */
export interface IsolateHost {
  /**
   * Runs `method` on the main thread (bot-host.ts) with `args` as JSON: the reply's value, or an
   * Error with its message and `outcome` (an OperationOutcome).
   */
  call(method: string, ...args: unknown[]): Promise<unknown>;
}

/** The host during preparation: scripts read it then; lazy groups are given it. */
export function preparationHost(): IsolateHost {
  const host = (globalThis as { __graphirHost?: IsolateHost }).__graphirHost;
  if (!host) throw new Error('The isolate host is only there while the isolate is prepared');
  return host;
}

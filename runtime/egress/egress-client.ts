/**
 * The server's requests to the outside world for a project (a bot's `fetch`, a Subscription's
 * rest-hook): Node's own fetch, through a dispatcher that connects only where the egress policy
 * allows. The check is on the address each connection is actually opened to, as it is opened —
 * after DNS, for every connection, redirects included — so a name that resolves to a public
 * address when asked and to 127.0.0.1 a moment later (DNS rebinding) gains nothing.
 *
 * Node's fetch is undici; its `dispatcher` option takes an undici Agent of the same major
 * version, from the `undici` package (test/egress/egress-client.test.ts checks the two agree).
 */
import { lookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { EgressPolicy } from './egress-policy.js';

/** A connection the policy refused; fetch rejects with TypeError('fetch failed') caused by it. */
export class EgressRefusedError extends Error {
  readonly code = 'EGRESS_REFUSED';
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

export class EgressClient {
  private readonly agent: Agent;

  constructor(readonly policy: EgressPolicy = EgressPolicy.DEFAULT) {
    const connect = buildConnector({ lookup: checkedLookup(policy) });
    this.agent = new Agent({
      connect: (options, callback) => {
        // Node connects to an IP address without a lookup: check the literal here.
        const { hostname } = options;
        const refusal = isIP(hostname) ? policy.refusal(hostname, hostname) : undefined;
        if (refusal) callback(new EgressRefusedError(refusal), null);
        else connect(options, callback);
      },
    });
  }

  /** Node's fetch, connecting only where the policy allows; redirects are checked likewise. */
  fetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
    return fetch(input, { ...init, dispatcher: this.agent } as RequestInit);
  }

  /** Closes its connections, cutting off requests still running. */
  close(): Promise<void> {
    return this.agent.destroy();
  }
}

/**
 * `dns.lookup` for net.connect that leaves out the addresses the policy refuses (all of them
 * allowed for a host the policy names), and fails with the first refusal when none is left.
 */
function checkedLookup(policy: EgressPolicy) {
  return (
    hostname: string,
    options: LookupOneOptions | LookupAllOptions,
    callback: LookupCallback,
  ): void => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const allowed = policy.allowsHost(hostname)
        ? addresses
        : addresses.filter(({ address }) => !policy.refusal(hostname, address));
      if (allowed.length === 0) {
        const refusal = policy.refusal(hostname, addresses[0].address)!;
        return callback(new EgressRefusedError(refusal), []);
      }
      if (options.all) callback(null, allowed);
      else callback(null, allowed[0].address, allowed[0].family);
    });
  };
}

/**
 * Which addresses the server may connect to when it sends a request for a project (a bot's
 * `fetch`, a Subscription's rest-hook): public ones, and the hosts and networks the operator
 * allows in GRAPHIR_EGRESS_ALLOW. Loopback, private, link-local, cloud-metadata, unspecified and
 * multicast addresses are refused by default: they reach the server itself, its database, its
 * cloud's credentials and the network behind it, none of which a project's code should reach
 * because it can name a URL. The check is on addresses, not names: the connector
 * (egress-client.ts) asks it for each address a name resolves to, as it connects.
 */
import { BlockList, isIP } from 'node:net';

/** The setting this policy is read from; named in every refusal. */
export const EGRESS_ALLOW = 'GRAPHIR_EGRESS_ALLOW';

/** Why an address is not public; each kind is refused unless allowed. */
export type AddressKind =
  | 'cloud metadata'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unspecified'
  | 'multicast'
  | 'reserved';

/**
 * The ranges of each kind, most specific first: the metadata addresses lie inside link-local
 * and private ranges and must be named as what they are.
 */
const RANGES: readonly (readonly [AddressKind, readonly string[]])[] = [
  // AWS, GCP, Azure and OpenStack (IPv4 and AWS's IPv6), Alibaba Cloud.
  ['cloud metadata', ['169.254.169.254/32', 'fd00:ec2::254/128', '100.100.100.200/32']],
  ['loopback', ['127.0.0.0/8', '::1/128']],
  [
    'private',
    // RFC 1918, carrier-grade NAT (RFC 6598), unique local and the deprecated site-local IPv6.
    ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7', 'fec0::/10'],
  ],
  ['link-local', ['169.254.0.0/16', 'fe80::/10']],
  // "This network" (0.0.0.0 connects to the host itself on Linux) and IPv6's unspecified address.
  ['unspecified', ['0.0.0.0/8', '::/128']],
  ['multicast', ['224.0.0.0/4', 'ff00::/8']],
  // Class E and the limited broadcast address.
  ['reserved', ['240.0.0.0/4']],
];

/** IPv6 prefixes whose last 32 bits are an IPv4 address that a connection reaches. */
const EMBEDDED_IPV4 = blockListOf(['::ffff:0:0/96', '64:ff9b::/96']);

const KINDS: readonly (readonly [AddressKind, BlockList])[] = RANGES.map(([kind, ranges]) => [
  kind,
  blockListOf(ranges),
]);

/** An IP address's kind when it is not a public address; undefined when it is. */
export function addressKind(address: string): AddressKind | undefined {
  const ip = reachedAddress(address);
  const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
  return KINDS.find(([, ranges]) => ranges.check(ip, family))?.[0];
}

export class EgressPolicy {
  /** Nothing but public addresses. */
  static readonly DEFAULT = new EgressPolicy(new BlockList(), new Set());

  private constructor(
    /** The addresses and networks allowed. */
    private readonly networks: BlockList,
    /** Host names allowed whatever they resolve to, lower case. */
    private readonly hosts: ReadonlySet<string>,
    /** The setting as written, for messages. */
    readonly text = '',
  ) {}

  /**
   * GRAPHIR_EGRESS_ALLOW: host names, IP addresses and CIDR networks (IPv4 or IPv6), separated
   * by commas or spaces, such as `fhir.internal, 10.1.0.0/16, fd12::/64, 127.0.0.1`. A host
   * name allows whatever it resolves to; an address or network allows connecting to those
   * addresses under any name. Throws, naming the setting and the entry, on anything else.
   */
  static parse(text: string): EgressPolicy {
    const networks = new BlockList();
    const hosts = new Set<string>();
    for (const entry of text.split(/[\s,]+/).filter(Boolean)) {
      const problem = addEntry(entry, networks, hosts);
      if (problem) {
        throw new Error(
          `${EGRESS_ALLOW} must list host names, IP addresses and CIDR networks (such as fhir.internal, 127.0.0.1, 10.0.0.0/8, fd00::/8), separated by commas or spaces, not "${text}": ${problem}`,
        );
      }
    }
    return new EgressPolicy(networks, hosts, text.trim());
  }

  /** Whether a request to host name `host` may go wherever it resolves to. */
  allowsHost(host: string): boolean {
    return this.hosts.has(host.toLowerCase().replace(/\.$/, ''));
  }

  /**
   * Why connecting to `address` is refused, or undefined when it is allowed. `host` is the name
   * it was resolved from, for the message (the address itself for a literal).
   */
  refusal(host: string, address: string): string | undefined {
    const kind = addressKind(address);
    if (!kind) return undefined;
    const ip = reachedAddress(address);
    const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (this.networks.check(ip, family) || this.networks.check(address, family)) return undefined;
    const what = `${article(kind)} ${kind} address, which ${EGRESS_ALLOW} does not allow`;
    return host === address ? `${address} is ${what}` : `${host} resolves to ${address}, ${what}`;
  }
}

/** Adds one entry of the setting; what is wrong with it, if anything. */
function addEntry(entry: string, networks: BlockList, hosts: Set<string>): string | undefined {
  const [base, prefix, extra] = entry.replace(/^\[(.*)\]$/, '$1').split('/');
  const family = isIP(base);
  if (family && prefix === undefined) {
    networks.addAddress(base, family === 6 ? 'ipv6' : 'ipv4');
    return undefined;
  }
  if (family) {
    const bits = Number(prefix);
    const max = family === 6 ? 128 : 32;
    if (extra !== undefined || !/^\d+$/.test(prefix) || bits > max)
      return `"${entry}" is not a CIDR network: the prefix length after / is a number from 0 to ${max}`;
    networks.addSubnet(base, bits, family === 6 ? 'ipv6' : 'ipv4');
    return undefined;
  }
  // A URL reads a host of digits and dots as an IPv4 address (127.1 is 127.0.0.1).
  if (/^[\d.]+$/.test(entry)) return `"${entry}" is not an IP address: write all four numbers`;
  if (HOST_NAME.test(entry)) {
    hosts.add(entry.toLowerCase().replace(/\.$/, ''));
    return undefined;
  }
  return `"${entry}" is neither a host name nor an IP address or CIDR network (write hosts without scheme, port or path)`;
}

/** A DNS name: dot-separated labels of letters, digits and inner hyphens, as in a URL's host. */
const HOST_NAME =
  /^(?=.{1,253}\.?$)(?:[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?\.)*[a-z\d](?:[a-z\d-]{0,61}[a-z\d])?\.?$/i;

/** The address a connection to `address` reaches: an IPv4-mapped or NAT64 address's IPv4 one. */
function reachedAddress(address: string): string {
  if (isIP(address) !== 6 || !EMBEDDED_IPV4.check(address, 'ipv6')) return address;
  // URL writes an IPv6 address in its canonical form, whose last two groups are the low 32 bits.
  const groups = new URL(`http://[${address}]`).hostname.slice(1, -1).split(':');
  const low = groups.slice(-2).map((group) => parseInt(group || '0', 16));
  return [low[0] >> 8, low[0] & 255, low[1] >> 8, low[1] & 255].join('.');
}

function blockListOf(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) {
    const [base, bits] = range.split('/');
    list.addSubnet(base, Number(bits), isIP(base) === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

function article(kind: AddressKind): string {
  return kind === 'unspecified' ? 'an' : 'a';
}

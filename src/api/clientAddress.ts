/**
 * Who an anonymous client is: not its exact address, which a client with a block of addresses
 * (an IPv6 /64 is the least a home line gets) can rotate through, but the network it comes
 * from: IPv4 /24, IPv6 /64. An IPv4 client on a dual-stack socket, seen as ::ffff:a.b.c.d,
 * counts as its IPv4 address.
 */
import { isIPv4 } from 'node:net';

const IPV4_PREFIX_OCTETS = 3;
const IPV6_PREFIX_GROUPS = 4;

/** The eight 16-bit groups of an IPv6 address, or null when it is not one. */
function ipv6Groups(address: string): number[] | null {
  let canonical: string;
  try {
    // The URL parser validates the address and writes it canonically: lower case, no leading
    // zeros, an embedded IPv4 address in hex, at most one "::".
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const groups = (part: string | undefined): number[] => (part ? part.split(':').map((group) => Number.parseInt(group, 16)) : []);
  const [head, tail] = canonical.split('::');
  const front = groups(head);
  if (tail === undefined) return front;
  const back = groups(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** An IPv4 network as `a.b.c.0/24`. */
const ipv4Network = (octets: number[]): string => `${[...octets.slice(0, IPV4_PREFIX_OCTETS), 0].join('.')}/${IPV4_PREFIX_OCTETS * 8}`;

/**
 * The network an anonymous client is counted by, spelled the same for every address in it
 * (`203.0.113.0/24`, `2001:db8:0:7::/64`); an address that is neither IPv4 nor IPv6 is kept as it is.
 */
export function clientNetwork(address: string | undefined): string {
  if (address === undefined) return 'unknown';
  if (isIPv4(address)) return ipv4Network(address.split('.').map(Number));
  // A link-local address may carry its interface ("fe80::1%eth0"); the network is the same.
  const groups = ipv6Groups(address.replace(/%.*$/, ''));
  if (!groups) return address;
  const mappedIpv4 = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  if (mappedIpv4) return ipv4Network([groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8]);
  return `${groups
    .slice(0, IPV6_PREFIX_GROUPS)
    .map((group) => group.toString(16))
    .join(':')}::/${IPV6_PREFIX_GROUPS * 16}`;
}

/** The caller an anonymous request counts as, for its rate and cost budget and its database sessions. */
export function anonymousCaller(address: string | undefined): string {
  return `address:${clientNetwork(address)}`;
}

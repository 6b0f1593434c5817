import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Default length of the IPv6 prefix that makes one client: a /64 is one subscriber's network. */
export const DEFAULT_IPV6_PREFIX_LENGTH = 64;

/**
 * The per-client limits' key of a client IP. An IPv4 address is its own key. An IPv6 address is
 * keyed by its network prefix (default /64): one subscriber holds a whole /64 (2^64 addresses), so
 * keying by address would give each of them a budget of its own. IPv4-mapped IPv6 (`::ffff:1.2.3.4`,
 * how a dual-stack socket reports IPv4 clients) is the IPv4 address; compressed, expanded and
 * upper-case forms give the same key; a zone id (`%eth0`, local to this host) is dropped. A value
 * that is not an IP address (a host's own key function's) is returned as given.
 *
 * Parsing and prefix arithmetic are ipaddr.js's (the library Express's proxy-addr uses); node:net's
 * isIP only decides what counts as an address, so that odd IPv4 spellings ipaddr.js would accept
 * (`0x7f.1`) are not folded into another client's key.
 */
export function clientAddressKey(ip: string, ipv6PrefixLength = DEFAULT_IPV6_PREFIX_LENGTH): string {
  if (isIP(ip) === 0) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const bytes = address.toByteArray();
  for (let bit = ipv6PrefixLength; bit < 128; bit++) bytes[bit >> 3] &= ~(0x80 >> (bit & 7));
  return `${ipaddr.fromByteArray(bytes).toString()}/${ipv6PrefixLength}`;
}

/** The network a client address belongs to: an IPv4 /24, an IPv6 /48; undefined for a value that is not an IP. */
const NETWORK_BITS = { ipv4: 24, ipv6: 48 } as const;

/** The client's network (`198.51.100.0/24`, `2001:db8:1::/48`), or undefined when `ip` is not an IP address. */
export function clientNetworkKey(ip: string): string | undefined {
  if (isIP(ip) === 0) return undefined;
  const address = ipaddr.process(ip);
  const bits = NETWORK_BITS[address.kind()];
  const bytes = address.toByteArray();
  for (let bit = bits; bit < bytes.length * 8; bit++) bytes[bit >> 3]! &= ~(0x80 >> (bit & 7));
  return `${ipaddr.fromByteArray(bytes).toString()}/${bits}`;
}

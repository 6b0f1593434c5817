import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { FigureGivers } from '../account/figure-evidence.js';
import { clientAddressKey } from '../protection/client-address.js';

/** The network a client address belongs to for the method figures: an IPv4 /24, an IPv6 /48. */
const NETWORK_BITS = { ipv4: 24, ipv6: 48 } as const;

/**
 * The givers of a start's method figures (FigureGivers): its caller, the client's address (an IPv6
 * /64 is one subscriber) and its network. An address that is not an IP gives only itself.
 */
export function figureGivers(caller: string | undefined, ip: string | undefined): FigureGivers {
  if (ip === undefined) return caller === undefined ? {} : { caller };
  const givers: FigureGivers = { address: clientAddressKey(ip) };
  if (caller !== undefined) givers.caller = caller;
  if (isIP(ip) !== 0) {
    const address = ipaddr.process(ip);
    const bits = NETWORK_BITS[address.kind()];
    const bytes = address.toByteArray();
    for (let bit = bits; bit < bytes.length * 8; bit++) bytes[bit >> 3]! &= ~(0x80 >> (bit & 7));
    givers.network = `${ipaddr.fromByteArray(bytes).toString()}/${bits}`;
  }
  return givers;
}

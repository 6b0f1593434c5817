import type { FigureGivers } from '../account/figure-evidence.js';
import { clientAddressKey, clientNetworkKey } from '../core/client-address.js';

/**
 * The givers of a start's method figures (FigureGivers): its caller, the client's address (an IPv6
 * /64 is one subscriber) and its network. An address that is not an IP gives only itself.
 */
export function figureGivers(caller: string | undefined, ip: string | undefined): FigureGivers {
  if (ip === undefined) return caller === undefined ? {} : { caller };
  const givers: FigureGivers = { address: clientAddressKey(ip) };
  if (caller !== undefined) givers.caller = caller;
  const network = clientNetworkKey(ip);
  if (network !== undefined) givers.network = network;
  return givers;
}

import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { clientAddressKey, clientNetworkKey } from '../core/client-address.js';
import type { StartCandidate } from './verification-protection.types.js';

/** The caller's rate-limit key: the host's `limits.key(req)`, else the client IP (IPv6 by its network prefix). */
export function clientKeyOf(
  limits: ResolvedVerificationOptions['limits'],
  request: unknown,
  ip: string | undefined,
): string | undefined {
  const key: unknown = limits.key?.(request);
  if (typeof key === 'string' && key !== '') return key;
  if (typeof key === 'number' && Number.isFinite(key)) return String(key);
  return ip === undefined ? undefined : clientAddressKey(ip, limits.ipv6PrefixLength);
}

/**
 * Who started a session, for handing it back (coalescing) and for exact cooldown timing: the owner,
 * else the browser key; nobody without either. Never the IP: two people behind one NAT are not one.
 */
export function starterOf(candidate: StartCandidate): string | undefined {
  if (candidate.owner !== undefined) return `owner:${candidate.owner}`;
  if (candidate.browserKey !== undefined) return `browser:${candidate.browserKey}`;
  return undefined;
}

/**
 * Whose free budget a start of a method charged on proof spends: its client key, its address (when
 * the host keys clients otherwise), its network (an IPv4 /24, an IPv6 /48: one holder of many
 * addresses) and its owner, each on its own.
 */
export function freeCallersOf(
  candidate: StartCandidate,
  limits: Pick<ResolvedVerificationOptions['limits'], 'ipv6PrefixLength'>,
): string[] {
  const address =
    candidate.ip === undefined ? undefined : clientAddressKey(candidate.ip, limits.ipv6PrefixLength);
  const network = candidate.ip === undefined ? undefined : clientNetworkKey(candidate.ip);
  return [
    ...(candidate.clientKey === undefined ? [] : [`client:${candidate.clientKey}`]),
    ...(address === undefined || address === candidate.clientKey ? [] : [`address:${address}`]),
    ...(network === undefined ? [] : [`network:${network}`]),
    ...(candidate.owner === undefined ? [] : [`owner:${candidate.owner}`]),
  ];
}

/**
 * Who is counted by the per-(phone, caller) limit and the cooldown: the owner, else the client key,
 * else one shared anonymous caller. Not the browser key: a caller drops a cookie for free.
 */
export function limitsCallerOf(candidate: StartCandidate): string {
  if (candidate.owner !== undefined) return `owner:${candidate.owner}`;
  if (candidate.clientKey !== undefined) return `client:${candidate.clientKey}`;
  return 'anonymous';
}

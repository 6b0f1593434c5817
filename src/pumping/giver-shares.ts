import { clientAddressKey, clientNetworkKey } from '../core/client-address.js';
import type { PumpingAttempt } from './pumping-subjects.js';

/**
 * Who gives a start's evidence, and how much of it one giver may add to what others are judged by
 * (a prefix's and a country's counts). Pure: RangeStats keeps each giver's balance in the store.
 *
 * A giver is every level a start comes from: the host's client key, the address (an IPv4 address,
 * an IPv6 /64) and the owner (its callers), and its network (an IPv4 /24, an IPv6 /48: one holder of
 * many addresses). Each keeps a balance for the fixed week, in hundredths of an unconverted start: a
 * start adds one start (START_WEIGHT), its verification gives back one start divided by the
 * country's prior (`expectedConversion`), so users who complete as the prior expects leave their
 * balance where it was and a network of them never runs out.
 *
 * A start's standing (standingOf): `within` every giver's share (its balance, with the start added,
 * stays within), it counts in its prefix and country, and is charged to every giver; past a network's
 * share only (`network`), it is charged to its callers and counts in its country's callers-bounded
 * twin (FINE) instead; past a caller's share (`past`), it is charged to nobody and counts in its
 * country's volume alone (VOLUME). Its range, its callers and the volume count every start. So one
 * address past its share takes nothing more from its network's (its neighbours stay within), and a
 * pool of many addresses in few networks still shows whole in the twin its starts are judged by
 * (pastShareUnderAttack: the share was its allowance for chance).
 *
 * The bound: a giver's starts counted within its share, less their verifications divided by the
 * prior, never pass the share; so one giver adds at most `share` unconverted starts, and
 * `share × prior` of shortfall from the prior, to a prefix or country in a fixed week, however its
 * starts are split among the addresses and keys inside it (giver-shares.spec.ts, a property).
 */

/** One giver of a start: its id (named as the store keys it), its share of a week in starts, and its level. */
export interface Giver {
  id: string;
  share: number;
  /** A network (IPv4 /24, IPv6 /48), else a caller (client key, address, owner). */
  network: boolean;
}

/** Where a start's givers stand against their shares (see the file's comment). */
export type Standing = 'within' | 'network' | 'past';

/** Balances are kept in hundredths of a start (the store counts integers). */
export const START_WEIGHT = 100;

/**
 * Shares of a fixed week, in unconverted starts. Two weeks' shares of one network in a sliding week
 * (18) stay under `countryMinStarts`' default (20), the least unconverted starts any country rule
 * asks: one network cannot put its country under attack, nor one address, key or owner.
 */
export const GIVER_SHARES = { client: 5, address: 5, owner: 5, network: 9 } as const;

/**
 * Networks past their share are evidence themselves, one vote each: a country with at least this many
 * distinct networks whose starts on one UTC day (today or yesterday) went past their share (unconverted paid starts: a
 * verification gives back) is under attack for everyone. Never 1 or 2: one network, or one address with
 * many keys (which passes its caller's share first, never its network's), cannot do it.
 */
export const PAST_NETWORKS_FLAG = 3;

/** The network giver a start's balances show past its share (with the start added), if any. */
export function networkPast(givers: readonly Giver[], balances: readonly number[]): Giver | undefined {
  for (const [i, g] of givers.entries())
    if (g.network && (balances[i] ?? 0) > g.share * START_WEIGHT) return g;
  return undefined;
}

/** The balances the next start would leave, from those read before it (in the order of `givers`). */
export function withNextStart(givers: readonly Giver[], balances: readonly number[]): number[] {
  const next: number[] = [];
  for (let i = 0; i < givers.length; i++) next.push((balances[i] ?? 0) + START_WEIGHT);
  return next;
}

/** The givers of a start: its client key, its address (when the host keys clients otherwise), its network, its owner. */
export function giversOf(attempt: PumpingAttempt, ipv6PrefixLength: number): Giver[] {
  const address = attempt.ip === undefined ? undefined : clientAddressKey(attempt.ip, ipv6PrefixLength);
  const network = attempt.ip === undefined ? undefined : clientNetworkKey(attempt.ip);
  const givers: Giver[] = [];
  if (attempt.clientKey !== undefined)
    givers.push({ id: `client:${attempt.clientKey}`, share: GIVER_SHARES.client, network: false });
  if (address !== undefined && address !== attempt.clientKey)
    givers.push({ id: `address:${address}`, share: GIVER_SHARES.address, network: false });
  if (network !== undefined)
    givers.push({ id: `net:${network}`, share: GIVER_SHARES.network, network: true });
  if (attempt.owner !== undefined)
    givers.push({ id: `owner:${attempt.owner}`, share: GIVER_SHARES.owner, network: false });
  return givers;
}

/** What a verification gives back to its start's givers: one start over the prior (hundredths). */
export function givenBack(expected: number): number {
  return Math.round(START_WEIGHT / Math.min(1, Math.max(expected, 0.05)));
}

/** A start's standing, from its givers' balances with it added (in the order of `givers`). */
export function standingOf(givers: readonly Giver[], balances: readonly number[]): Standing {
  for (const [i, g] of givers.entries())
    if (!g.network && (balances[i] ?? 0) > g.share * START_WEIGHT) return 'past';
  return networkPast(givers, balances) ? 'network' : 'within';
}

/** The next start's standing, from the balances read before it. */
export function nextStanding(givers: readonly Giver[], balances: readonly number[]): Standing {
  return standingOf(givers, withNextStart(givers, balances));
}

/** The givers a start of this standing stays charged to (and its verification gives back to). */
export function chargedGivers<G extends Giver>(givers: readonly G[], standing: Standing): G[] {
  if (standing === 'past') return [];
  return standing === 'network' ? givers.filter((g) => !g.network) : [...givers];
}

/** What a start's verification gives back, and to whom: the givers it was charged to, one start over the prior each. */
export function giveBackOf(
  givers: readonly Giver[],
  standing: Standing,
  expected: number,
): { givers: string[]; amount: number } {
  return { givers: chargedGivers(givers, standing).map((g) => g.id), amount: givenBack(expected) };
}

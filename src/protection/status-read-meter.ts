import { Inject, Injectable } from '@nestjs/common';
import type { DataKeys } from '../core/data-keys.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { clientNetworkKey } from '../core/client-address.js';
import { clientKeyOf } from './start-callers.js';
import { ProtectionKeys } from './protection-keys.js';

/**
 * Status reads that may go upstream per caller (owner, else client key) and window, at most `refreshes`
 * of them refreshes of a stored record (a page polling one or two verifications at their poll interval,
 * 1.5 s at the fastest, stays within it); the other points are kept for rebuilds of lost records.
 */
export const STATUS_READS_PER_CALLER = { points: 8, refreshes: 6, windowMs: 3_000 } as const;

/**
 * Refreshes that may go upstream per client network (an IPv4 /24, an IPv6 /48) and window, whoever
 * asks from it: many addresses of one holder are one giver of the account's API rate, as their free
 * starts are. At most `perSecond` of them in the last second (`lastSecondCount`), the unit the API counts
 * its rate in: a window's refreshes spent at once would take a whole second of a small account's rate,
 * and real users' starts in that second would meet the API's 429. Past either a page is answered as
 * stored; a rebuild is metered per caller only.
 */
export const STATUS_REFRESHES_PER_NETWORK = { refreshes: 12, perSecond: 6, windowMs: 3_000 } as const;

/**
 * A network's refreshes in the last 1,000 ms, counted as the API may count them (its seconds fall
 * anywhere on ours): this second's count and the previous second's, weighted by the share of it the
 * last 1,000 ms still hold (`intoSecondMs` into this second).
 */
export function lastSecondCount(current: number, previous: number, intoSecondMs: number): number {
  return current + previous * (1 - Math.min(Math.max(intoSecondMs, 0), SECOND_MS) / SECOND_MS);
}

/**
 * What an upstream read is for: a `refresh` of a record the store holds (refused, it is answered as
 * stored) or the `rebuild` of a record the store lost (refused, nothing can be answered).
 */
export type UpstreamRead = 'refresh' | 'rebuild';

/** A meter's window: `points` reads in all, at most `refreshes` of them refreshes. */
export interface UpstreamReadBudget {
  points: number;
  refreshes: number;
  windowMs: number;
}

/**
 * Reads that may go upstream for one key and window, across instances: false once they are spent.
 * Refreshes take their own count first (at most `refreshes`): a caller's polls of records the store
 * holds (its own, or a neighbour's behind its address) never spend the points a lost record's rebuild,
 * which has no stored answer, needs.
 */
export async function takeUpstreamRead(
  store: VerificationStore,
  key: string,
  budget: UpstreamReadBudget,
  read: UpstreamRead,
  spent?: (key: string, until: number) => void,
): Promise<boolean> {
  if (read === 'refresh') {
    const taken = await store.increment(`${key}:refresh`, 1, budget.windowMs, { evictable: true });
    if (taken.value > budget.refreshes) {
      spent?.(`${key}:refresh`, taken.expiresAt);
      return false;
    }
  }
  const { value, expiresAt } = await store.increment(key, 1, budget.windowMs, { evictable: true });
  if (value <= budget.points) return true;
  spent?.(key, expiresAt);
  return false;
}

/**
 * Whose meter an upstream status read takes (the status route's, the streams' and the guard's): the
 * owner, else the caller's client key (`limits.key`, else its address); undefined with neither.
 */
export function upstreamReader(
  limits: ResolvedVerificationOptions['limits'],
  owner: string | undefined,
  from: { request?: unknown; ip?: string } | undefined,
): string | undefined {
  if (owner !== undefined) return `owner:${owner}`;
  const client = clientKeyOf(limits, from?.request, from?.ip);
  return client === undefined ? undefined : `client:${client}`;
}

/**
 * Meters the status route's and the status streams' own upstream reads per caller, so that one
 * caller polling many verifications of its own (free starts included) cannot spend the account's API
 * rate, which every user's start needs. Past the meter the status is answered as stored (kept
 * current by webhooks and the reconciler); a read shared within a session's poll interval takes none.
 */
@Injectable()
export class StatusReadMeter {
  private readonly keys: DataKeys;
  /**
   * Meters this instance found spent, and the end of their window (store clock): a flood of polls past
   * a meter is answered as stored without asking the store again. A window only ends, so this never
   * refuses what the store would grant, but for a network's refreshes that a refused caller gives back.
   */
  readonly #spentUntil = new Map<string, { since: number; until: number }>();

  /** @internal Made by the module (dependency injection). */
  constructor(
    @Inject(VerificationStore) private readonly store: VerificationStore,
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
  ) {
    this.keys = options.dataKeys;
  }

  /**
   * Whether this instance already found the caller's (or its network's) reads of this kind spent in
   * their current window: the read would be refused, so nothing is asked of the store.
   */
  spent(
    owner: string | undefined,
    from: { request?: unknown; ip?: string } | undefined,
    read: UpstreamRead,
  ): boolean {
    // Every status poll asks: no digest is computed while nothing is remembered.
    if (this.#spentUntil.size === 0) return false;
    const meters = this.meters(owner, from, read);
    return meters !== undefined && this.#known(meters, read);
  }

  #known(meters: ReadMeters, read: UpstreamRead): boolean {
    const now = this.store.now();
    const keys =
      read === 'refresh'
        ? [`${meters.caller}:refresh`, meters.caller, meters.network?.window, meters.network?.lastSecond]
        : [meters.caller];
    return keys.some((key) => {
      const spent = key === undefined ? undefined : this.#spentUntil.get(key);
      if (spent === undefined) return false;
      // A clock moved back before the refusal is not trusted: the store's counter may be gone.
      if (spent.since <= now && now < spent.until) return true;
      this.#spentUntil.delete(key!);
      return false;
    });
  }

  /** Takes one read of the caller's meter; false when its window's reads are spent (never with `limits.enabled: false`). */
  async take(
    owner: string | undefined,
    from: { request?: unknown; ip?: string } | undefined,
    read: UpstreamRead,
  ): Promise<boolean> {
    const meters = this.meters(owner, from, read);
    if (meters === undefined) return true;
    if (this.#known(meters, read)) return false;
    const { caller, network } = meters;
    const { windowMs, refreshes, perSecond } = STATUS_REFRESHES_PER_NETWORK;
    const markSpent = (key: string, until: number): void => {
      if (this.#spentUntil.size >= SPENT_METERS_REMEMBERED) this.#spentUntil.clear();
      this.#spentUntil.set(key, { since: this.store.now(), until });
    };
    // Taken together (one round trip): the caller's meter and, for a refresh, its network's counts.
    const secondStarts = (network?.secondEnds ?? 0) - SECOND_MS;
    const [mine, window, second, previous] = await Promise.all([
      takeUpstreamRead(this.store, caller, STATUS_READS_PER_CALLER, read, markSpent),
      network && this.store.increment(network.window, 1, windowMs, { evictable: true }),
      // Kept through the next second, which weighs it (lastSecondCount).
      network &&
        this.store.increment(network.second, 1, network.secondEnds + SECOND_MS - this.store.now(), {
          evictable: true,
        }),
      network && this.store.get(network.previousSecond),
    ]);
    if (network === undefined) return mine;
    const before = Number(previous ?? 0);
    const bySecond = lastSecondCount(second!.value, before, this.store.now() - secondStarts) > perSecond;
    const byWindow = !bySecond && window!.value > refreshes;
    if (mine && !bySecond && !byWindow) return true;
    // A refused read takes nothing of its network's counts, which count what went upstream (a read its
    // caller's own meter refused neither: one address cannot spend its network's); each given back
    // within the window it was taken from only (past it, the next window would gain one). A count that
    // refused is remembered until it could grant again.
    const giveBack = ({ expiresAt }: { expiresAt: number }, key: string) => {
      const left = expiresAt - this.store.now();
      return left > 0 ? this.store.increment(key, -1, left, { evictable: true }) : undefined;
    };
    if (mine && byWindow) markSpent(network.window, window!.expiresAt);
    if (mine && bySecond) markSpent(network.lastSecond, secondOpens(second!.value - 1, before, secondStarts));
    await Promise.all([giveBack(window!, network.window), giveBack(second!, network.second)]);
    return false;
  }

  /**
   * The store keys of the meters a read takes: the caller's (owner, else client key) and, for a
   * refresh from a known address, its network's. Undefined when nothing meters it: limits off, or the
   * host's own call (no owner, no request), whose reads are the host's to pace, never everyone's one meter.
   */
  private meters(
    owner: string | undefined,
    from: { request?: unknown; ip?: string } | undefined,
    read: UpstreamRead,
  ): ReadMeters | undefined {
    if (!this.options.limits.enabled) return undefined;
    const caller = upstreamReader(this.options.limits, owner, from);
    if (caller === undefined) return undefined;
    const client = read === 'refresh' && from?.ip !== undefined ? clientNetworkKey(from.ip) : undefined;
    if (client === undefined) return { caller: ProtectionKeys.statusReads(this.keys, caller) };
    const window = ProtectionKeys.statusReads(this.keys, `network:${client}`);
    // Named by its second, as the API counts: instances and a window opened mid-second agree on it.
    const second = Math.floor(this.store.now() / SECOND_MS);
    return {
      caller: ProtectionKeys.statusReads(this.keys, caller),
      network: {
        window,
        second: `${window}:${second}`,
        previousSecond: `${window}:${second - 1}`,
        secondEnds: (second + 1) * SECOND_MS,
        lastSecond: `${window}:last-second`,
      },
    };
  }
}

const SECOND_MS = 1_000;

/**
 * When a network's last second (lastSecondCount) could first take one more refresh, the others of this
 * second (`others`) and the previous second's count (`before`) as they are: this second's end at the latest.
 */
function secondOpens(others: number, before: number, secondStarts: number): number {
  const { perSecond } = STATUS_REFRESHES_PER_NETWORK;
  if (before === 0) return secondStarts + SECOND_MS;
  // One more fits once others + 1 + before × (1 - x) <= perSecond, x the part of this second gone.
  return secondStarts + Math.ceil(SECOND_MS * Math.min(1, 1 - (perSecond - others - 1) / before));
}

/** The store keys a read takes: its caller's meter and, for a refresh from a known address, its network's counts. */
interface ReadMeters {
  caller: string;
  network?: {
    /** The network's window (STATUS_REFRESHES_PER_NETWORK.windowMs from its first refresh). */
    window: string;
    /** The network's counts of this second of the clock and of the previous one, and when this one ends (store clock). */
    second: string;
    previousSecond: string;
    secondEnds: number;
    /** What this instance remembers of the network's last second (one name: a spent second is forgotten once open). */
    lastSecond: string;
  };
}

/** Spent meters one instance remembers at most (all forgotten at once past it: the store still decides). */
const SPENT_METERS_REMEMBERED = 10_000;

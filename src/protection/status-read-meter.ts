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
 * starts are. At most `perSecond` of them in any 1,000 ms, the span the API counts its rate over,
 * wherever its seconds fall on ours (counted in slices: `LAST_SECOND`): a window's refreshes spent at
 * once would take a whole second of a small account's rate, and real users' starts in that second would
 * meet the API's 429. Past either a page is answered as stored; a rebuild is metered per caller only.
 */
export const STATUS_REFRESHES_PER_NETWORK = { refreshes: 12, perSecond: 6, windowMs: 3_000 } as const;

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
   * refuses what the store would grant, but for counts that refused reads give back: a network's is
   * remembered to the end of its 100-ms slice at most.
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
    const mine = takeUpstreamRead(this.store, caller, STATUS_READS_PER_CALLER, read, markSpent);
    if (network === undefined) return mine;
    const slices = lastSecondSlices(network.window, this.store.now());
    // Taken together (one round trip): the caller's meter and its network's counts.
    const [granted, window, slice, ...around] = await Promise.all([
      mine,
      this.store.increment(network.window, 1, windowMs, { evictable: true }),
      this.store.increment(slices.current, 1, LAST_SECOND.keptMs, { evictable: true }),
      ...slices.around.map((key) => this.store.get(key)),
    ]);
    const lastSecond = around.reduce((sum, n) => sum + Number(n ?? 0), slice.value);
    const bySecond = lastSecond > perSecond;
    const byWindow = !bySecond && window.value > refreshes;
    if (granted && !bySecond && !byWindow) return true;
    // A count that refused is remembered to its slice's end at most: concurrent refused reads not yet
    // given back make it look fuller than it is. A read its caller's own meter refused says nothing of them.
    if (granted && bySecond) markSpent(network.lastSecond, slices.ends);
    else if (granted) markSpent(network.window, Math.min(window.expiresAt, slices.ends));
    // A refused read takes nothing of its network's counts, which count what went upstream (a read its
    // caller's own meter refused neither: one address cannot spend its network's); each given back
    // within the window it was taken from only (past it, the next window would gain one).
    const giveBack = ({ expiresAt }: { expiresAt: number }, key: string) => {
      const left = expiresAt - this.store.now();
      return left > 0 ? this.store.increment(key, -1, left, { evictable: true }) : undefined;
    };
    await Promise.all([giveBack(window, network.window), giveBack(slice, slices.current)]);
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
    return {
      caller: ProtectionKeys.statusReads(this.keys, caller),
      network: { window, lastSecond: `${window}:last-second` },
    };
  }
}

/**
 * How a network's last 1,000 ms are counted: in slices of `sliceMs`, the current one and the `before`
 * ones that cover the 1,000 ms before now whatever the time within the slice (so up to 1,100 ms are
 * counted, never fewer than 1,000), and `ahead` ones: an instance whose clock is behind another's (by up to
 * a slice) counts what the other wrote. A slice is kept while a later one counts it.
 */
const LAST_SECOND = { sliceMs: 100, before: 10, ahead: 1, keptMs: 1_300 } as const;

/**
 * The store keys of a network's slices at `now` (LAST_SECOND): the current one, when it ends, and the
 * others counted with it. Named by their place on the clock: instances and a window opened mid-slice
 * agree on them.
 */
function lastSecondSlices(window: string, now: number): { current: string; ends: number; around: string[] } {
  const { sliceMs, before, ahead } = LAST_SECOND;
  const at = Math.floor(now / sliceMs);
  const around: string[] = [];
  for (let n = at - before; n <= at + ahead; n++) if (n !== at) around.push(`${window}:${n}`);
  return { current: `${window}:${at}`, ends: (at + 1) * sliceMs, around };
}

/** The store keys a read takes: its caller's meter and, for a refresh from a known address, its network's. */
interface ReadMeters {
  caller: string;
  network?: {
    /** The network's window (STATUS_REFRESHES_PER_NETWORK.windowMs from its first refresh). */
    window: string;
    /** What this instance remembers of the network's last second (one name: forgotten once it ends). */
    lastSecond: string;
  };
}

/** Spent meters one instance remembers at most (all forgotten at once past it: the store still decides). */
const SPENT_METERS_REMEMBERED = 10_000;

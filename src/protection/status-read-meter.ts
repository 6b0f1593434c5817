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
 * starts are. Past it a page is answered as stored; a rebuild is metered per caller only.
 */
export const STATUS_REFRESHES_PER_NETWORK = { refreshes: 12, windowMs: 3_000 } as const;

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
): Promise<boolean> {
  if (read === 'refresh') {
    const taken = await store.increment(`${key}:refresh`, 1, budget.windowMs, { evictable: true });
    if (taken.value > budget.refreshes) return false;
  }
  const { value } = await store.increment(key, 1, budget.windowMs, { evictable: true });
  return value <= budget.points;
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

  /** @internal Made by the module (dependency injection). */
  constructor(
    @Inject(VerificationStore) private readonly store: VerificationStore,
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
  ) {
    this.keys = options.dataKeys;
  }

  /** Takes one read of the caller's meter; false when its window's reads are spent (never with `limits.enabled: false`). */
  async take(
    owner: string | undefined,
    from: { request?: unknown; ip?: string } | undefined,
    read: UpstreamRead,
  ): Promise<boolean> {
    if (!this.options.limits.enabled) return true;
    const caller = upstreamReader(this.options.limits, owner, from);
    // The host's own call (no owner, no request): its reads are the host's to pace, never everyone's one meter.
    if (caller === undefined) return true;
    const network = read === 'refresh' && from?.ip !== undefined ? clientNetworkKey(from.ip) : undefined;
    const networkKey = network && ProtectionKeys.statusReads(this.keys, `network:${network}`);
    const { windowMs, refreshes } = STATUS_REFRESHES_PER_NETWORK;
    // Taken together (one round trip): the caller's meter and, for a refresh, its network's.
    const [mine, ours] = await Promise.all([
      takeUpstreamRead(
        this.store,
        ProtectionKeys.statusReads(this.keys, caller),
        STATUS_READS_PER_CALLER,
        read,
      ),
      networkKey === undefined
        ? undefined
        : this.store.increment(networkKey, 1, windowMs, { evictable: true }).then(({ value }) => value),
    ]);
    if (ours === undefined) return mine;
    // A read its caller's own meter refused takes nothing of its network's: one address cannot spend it.
    if (!mine) await this.store.increment(networkKey!, -1, windowMs, { evictable: true });
    return mine && ours <= refreshes;
  }
}

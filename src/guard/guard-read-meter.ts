import type { DataKeys } from '../core/data-keys.js';
import type { VerificationStore } from '../store/verification-store.interface.js';

/** Guard reads that may go upstream, per owner and window: past it the guard answers from the store. */
export const GUARD_READS_PER_OWNER = { points: 30, windowMs: 60_000 } as const;

/**
 * Meters VerifiedPhoneGuard's upstream reads per owner (`owner(req)`; callers without one share one
 * meter) across instances, so that one caller presenting many pending verifications to a guarded
 * route cannot spend the account's API rate limit on other users' starts. Past the meter the
 * guard reads the record as stored (kept current by the reconciler and webhooks).
 */
export class GuardReadMeter {
  /** Made by VerifiedPhoneGuard, its only user. */
  constructor(
    private readonly store: VerificationStore,
    private readonly keys: DataKeys,
  ) {}

  /** Takes one read of `owner`'s meter; false when the window's reads are spent. */
  async take(owner: string | undefined): Promise<boolean> {
    const key = `guard-reads:{${this.keys.digest(owner ?? '')}}`;
    const { value } = await this.store.increment(key, 1, GUARD_READS_PER_OWNER.windowMs, { evictable: true });
    return value <= GUARD_READS_PER_OWNER.points;
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { DataKeys } from '../core/data-keys.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { takeUpstreamRead, upstreamReader, type UpstreamRead } from '../protection/status-read-meter.js';
import { VerificationStore } from '../store/verification-store.interface.js';

/**
 * Guard reads that may go upstream, per owner and window, `refreshes` of them refreshes (the rest kept
 * for rebuilds of lost records, see `takeUpstreamRead`): past it the guard answers from the store.
 */
export const GUARD_READS_PER_OWNER = { points: 40, refreshes: 30, windowMs: 60_000 } as const;

/**
 * Meters VerifiedPhoneGuard's upstream reads (a refresh, or the rebuild of a record the store lost)
 * per caller as the status route's are (`upstreamReader`: the owner, else the client key; a request
 * with neither shares one meter) across instances, so that one caller presenting many pending verifications to a guarded
 * route cannot spend the account's API rate limit on other users' starts. Past the meter the
 * guard reads the record as stored (kept current by the reconciler and webhooks).
 */
@Injectable()
export class GuardReadMeter {
  private readonly keys: DataKeys;

  /** @internal Made by the module (dependency injection), for VerifiedPhoneGuard. */
  constructor(
    @Inject(VerificationStore) private readonly store: VerificationStore,
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
  ) {
    this.keys = options.dataKeys;
  }

  /** Takes one read of the caller's meter (`owner`, else the request's client key); false when the window's reads are spent. */
  take(
    owner: string | undefined,
    from: { request?: unknown; ip?: string },
    read: UpstreamRead,
  ): Promise<boolean> {
    const caller = upstreamReader(this.options.limits, owner, from) ?? '';
    return takeUpstreamRead(
      this.store,
      `guard-reads:{${this.keys.digest(caller)}}`,
      GUARD_READS_PER_OWNER,
      read,
    );
  }
}

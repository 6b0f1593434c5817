import type { VerificationStore } from '../store/verification-store.interface.js';
import type { RateLimit } from '../verification.options.js';
import type { ProtectionHold } from './protection-hold.js';
import { digest, ProtectionKeys } from './protection-keys.js';
import { ProtectionRefusalReason, rateLimited } from './protection-refusals.js';
import { StoreRateLimiter } from './store-rate-limiter.js';

const NOTHING_HELD: ProtectionHold = { release: async () => undefined };

/**
 * The request limits of the client routes: starts per client key, starts per phone number and
 * checks per client key, each a fixed window in the store. A caller without a client key (the
 * host calling VerificationService without an IP or key) is not subject to the per-client limits.
 */
export class RequestRateLimits {
  private readonly startPerClient: StoreRateLimiter | undefined;
  private readonly startPerPhone: StoreRateLimiter | undefined;
  private readonly checkPerClient: StoreRateLimiter | undefined;

  constructor(
    store: VerificationStore,
    limits: {
      startPerIp: RateLimit | false;
      startPerPhone: RateLimit | false;
      checkPerIp: RateLimit | false;
    },
  ) {
    // Per-client counters are evictable: one exists per caller, so a flood of callers must not
    // evict the per-phone limits, cooldowns and sessions a bounded store keeps.
    this.startPerClient = limiter(store, ProtectionKeys.startPerClient, limits.startPerIp, true);
    this.startPerPhone = limiter(store, ProtectionKeys.startPerPhone, limits.startPerPhone, false);
    this.checkPerClient = limiter(store, ProtectionKeys.checkPerClient, limits.checkPerIp, true);
  }

  /** Whether every start is counted in the store (the per-phone limit applies to every start). */
  get countsEveryStart(): boolean {
    return this.startPerPhone !== undefined;
  }

  /**
   * Counts one start against the caller's and the phone's limits, or throws 429. The hold gives
   * both points back (the start was refused further on, so it must not count).
   */
  async countStart(clientKey: string | undefined, phoneNumber: string): Promise<ProtectionHold> {
    const clientHold = await count(
      this.startPerClient,
      clientKey === undefined ? undefined : digest(clientKey),
      ProtectionRefusalReason.startIpLimit,
    );
    try {
      const phoneHold = await count(
        this.startPerPhone,
        digest(phoneNumber),
        ProtectionRefusalReason.startPhoneLimit,
      );
      return {
        release: async () => {
          await phoneHold.release();
          await clientHold.release();
        },
      };
    } catch (error) {
      await clientHold.release().catch(() => undefined);
      throw error;
    }
  }

  /** Counts one code check against the caller's limit, or throws 429 `check_limit`. */
  async countCheck(clientKey: string | undefined): Promise<void> {
    await count(
      this.checkPerClient,
      clientKey === undefined ? undefined : digest(clientKey),
      ProtectionRefusalReason.checkLimit,
    );
  }
}

function limiter(store: VerificationStore, keyPrefix: string, limit: RateLimit | false, evictable: boolean) {
  return limit === false
    ? undefined
    : new StoreRateLimiter(store, { keyPrefix, points: limit.points, windowMs: limit.windowMs, evictable });
}

async function count(
  limiter: StoreRateLimiter | undefined,
  key: string | undefined,
  reason: ProtectionRefusalReason,
): Promise<ProtectionHold> {
  if (limiter === undefined || key === undefined) return NOTHING_HELD;
  const outcome = await limiter.tryConsume(key);
  if (!outcome.allowed) throw rateLimited(reason, outcome.msBeforeNext);
  return { release: () => limiter.refund(key) };
}

import type { VerificationStore } from '../store/verification-store.interface.js';
import type { RateLimit, ResolvedPurposes } from '../options/verification.options.js';
import type { ProtectionHold } from './protection-hold.js';
import type { DataKeys } from '../core/data-keys.js';
import { ProtectionKeys } from './protection-keys.js';
import { coarseWaitMs, ProtectionRefusalReason, protectionRefusal } from '../core/refusal-reason.js';
import { StoreRateLimiter } from './store-rate-limiter.js';

const NOTHING_HELD: ProtectionHold = { release: async () => undefined };

/** A free start's points (store keys of its callers' free budgets) and the end of the first of their windows. */
export interface FreeStartHold extends ProtectionHold {
  readonly keys: readonly string[];
  readonly until: number;
}

/**
 * The request limits of the client routes, each a fixed window in the store: starts per client
 * key, starts per phone number and caller, starts per phone number from all callers (a higher
 * ceiling), and checks per client key. A caller without a client key (the host calling
 * VerificationService without an IP or key) is not subject to the per-client limits.
 *
 * The API's own rate limit is kept here too, shared by every instance: once a start is answered 429,
 * starts wait out its `Retry-After` (429 `upstream_rate_limit`, nothing sent) instead of being
 * forwarded into a full account rate, where they would only lengthen every user's wait.
 *
 * Per number, a caller first spends its own budget (`startPerPhoneAndCaller`), so another caller's
 * starts cannot use up the owner's; the ceiling (`startPerPhone`) bounds what all callers together
 * send to one number. Its refusal is caused by other callers, so its `Retry-After` is coarse.
 */
export class RequestRateLimits {
  private readonly startPerClient: StoreRateLimiter | undefined;
  private readonly freeStartPerCaller: StoreRateLimiter | undefined;
  private readonly startPerPhoneAndCaller: StoreRateLimiter | undefined;
  private readonly startPerPhone: StoreRateLimiter | undefined;
  private readonly checkPerClient: StoreRateLimiter | undefined;
  /** Each declared purpose's own per-number limit. */
  private readonly startPerPurpose = new Map<string, StoreRateLimiter>();

  constructor(
    private readonly store: VerificationStore,
    private readonly limits: {
      /** Off (`limits.enabled: false`): the API's back-off is neither kept nor waited out. */
      enabled: boolean;
      startPerIp: RateLimit | false;
      freeStartPerCaller: RateLimit | false;
      startPerPhoneAndCaller: RateLimit | false;
      startPerPhone: RateLimit | false;
      checkPerIp: RateLimit | false;
    },
    private readonly keys: DataKeys,
    purposes?: ResolvedPurposes,
  ) {
    for (const [purpose, policy] of Object.entries(purposes?.declared ?? {})) {
      const limiter = StoreRateLimiter.forLimit(store, ProtectionKeys.startPerPurpose, policy.startPerPhone);
      if (limiter) this.startPerPurpose.set(purpose, limiter);
    }
    // Counters one of which exists per caller are evictable: a flood of callers must not evict the
    // per-phone ceilings, cooldowns and sessions a bounded store keeps.
    this.startPerClient = StoreRateLimiter.forLimit(
      store,
      ProtectionKeys.startPerClient,
      limits.startPerIp,
      true,
    );
    this.freeStartPerCaller = StoreRateLimiter.forLimit(
      store,
      ProtectionKeys.freeStartPerCaller,
      limits.freeStartPerCaller,
      true,
    );
    this.startPerPhoneAndCaller = StoreRateLimiter.forLimit(
      store,
      ProtectionKeys.startPerPhoneAndCaller,
      limits.startPerPhoneAndCaller,
      true,
    );
    this.startPerPhone = StoreRateLimiter.forLimit(store, ProtectionKeys.startPerPhone, limits.startPerPhone);
    this.checkPerClient = StoreRateLimiter.forLimit(
      store,
      ProtectionKeys.checkPerClient,
      limits.checkPerIp,
      true,
    );
  }

  /**
   * Counts one start against the client's, the (phone, caller)'s and the phone's limits, or throws
   * 429. The hold gives every point back (the start was refused further on, or nothing was sent).
   * `clientKey` undefined: the per-client limit does not apply to this start. `perPhone` false: the
   * phone's own limit is not taken (a test number's start: its caller's limits only).
   */
  async countStart(
    clientKey: string | undefined,
    phoneNumber: string,
    caller: string,
    perPhone = true,
  ): Promise<ProtectionHold> {
    // Counted together (one round trip); the first refusal in this order answers, the others' points
    // are given back, as when each was counted after the one before it had passed.
    return countAll([
      [
        this.startPerClient,
        clientKey === undefined ? undefined : this.keys.digest(clientKey),
        ProtectionRefusalReason.startIpLimit,
      ],
      [
        this.startPerPhoneAndCaller,
        this.keys.digest(`${caller}\n${phoneNumber}`),
        ProtectionRefusalReason.startPhoneCallerLimit,
      ],
      ...(perPhone
        ? [
            [
              this.startPerPhone,
              this.keys.digest(phoneNumber),
              ProtectionRefusalReason.startPhoneLimit,
              true,
            ] as const,
          ]
        : []),
    ]);
  }

  /**
   * Counts one start of `purpose` against its own per-number limit (`purposes[name].limits`), or
   * throws 429 `start_phone_limit`; nothing to count without a purpose or a limit of it.
   */
  countPurposeStart(purpose: string | undefined, phoneNumber: string): Promise<ProtectionHold> {
    const limiter = purpose === undefined ? undefined : this.startPerPurpose.get(purpose);
    // No limit of its own: nothing to key (a digest) or count.
    if (limiter === undefined) return Promise.resolve(NOTHING_HELD);
    return count(
      limiter,
      purposeKey(this.keys, purpose!, phoneNumber),
      ProtectionRefusalReason.startPhoneLimit,
    );
  }

  /**
   * Counts one start of a method charged on proof against each of its callers' free budget (client
   * key, network, owner: distinct ids), or throws 429 `start_ip_limit`. Free for the host unless
   * proved, such a start is still an upstream call: nobody gets them without limit. The hold names
   * its points and when the first of their windows ends, for a proof to give them back
   * (`rememberFreeStart`).
   */
  async countFreeStart(callers: readonly string[]): Promise<FreeStartHold> {
    const limiter = this.freeStartPerCaller;
    if (limiter === undefined) return { ...NOTHING_HELD, keys: [], until: 0 };
    const keys: string[] = [];
    let until = Infinity;
    const release = async (): Promise<void> => {
      await Promise.all(keys.map((key) => limiter.refund(key)));
    };
    try {
      for (const key of new Set(callers.map((caller) => this.keys.digest(caller)))) {
        const outcome = await limiter.tryConsume(key);
        if (!outcome.allowed) {
          // A refused point is kept (its window's count says the budget was reached), as `count` keeps it.
          throw protectionRefusal(ProtectionRefusalReason.startIpLimit, outcome.msBeforeNext);
        }
        keys.push(key);
        until = Math.min(until, this.store.now() + outcome.msBeforeNext);
      }
    } catch (error) {
      await release().catch(() => undefined);
      throw error;
    }
    return { release, keys, until: Number.isFinite(until) ? until : 0 };
  }

  /**
   * A free start's session was started: its points are remembered until the first of their windows
   * ends, so that its proof (`freeStartProved`) gives them back. Past that, a proof gives nothing:
   * the next window would gain a point it never counted.
   */
  async rememberFreeStart(requestId: string, hold: FreeStartHold): Promise<void> {
    const left = hold.until - this.store.now();
    if (hold.keys.length === 0 || left <= 0) return;
    const kept = [String(hold.until), ...hold.keys].join(' ');
    await this.store.set(ProtectionKeys.freeStartProof(requestId), kept, left, { evictable: true });
  }

  /**
   * A session was verified: the free points its start took are given back while their windows run.
   * A start the user proved (a call placed from the number, a code typed) is not what the free budget
   * bounds: starts nobody completes, each an upstream call.
   */
  async freeStartProved(requestId: string): Promise<void> {
    const limiter = this.freeStartPerCaller;
    if (limiter === undefined) return;
    const key = ProtectionKeys.freeStartProof(requestId);
    const kept = await this.store.get(key);
    if (kept === null) return;
    const [until, ...points] = kept.split(' ');
    const left = Number(until) - this.store.now();
    // One giving back however many deliveries of the event overlap (each instance may hold one): the
    // first to mark the proof gives back, the others nothing.
    if (!(left > 0) || !(await this.store.setIfAbsent(`${key}:given`, '1', left))) return;
    await this.store.delete(key);
    // Within the windows only: a counter gone by now is not made again (its next window gains nothing).
    const remaining = Number(until) - this.store.now();
    if (!(remaining > 0)) return;
    await Promise.all(points.map((point) => limiter.refund(point, 1, remaining)));
  }

  /** The API answered a start 429 with `retryAfterMs`: starts wait until then (a later end is never shortened). */
  async holdUpstream(retryAfterMs: number): Promise<void> {
    if (!this.limits.enabled) return;
    const ms = Math.max(1, retryAfterMs);
    const until = this.store.now() + ms;
    if (until <= (await this.upstreamUntil())) return;
    await this.store.set(ProtectionKeys.apiBackoff, String(until), ms);
  }

  /** Throws 429 `upstream_rate_limit` while the API's back-off runs. */
  async assertUpstreamOpen(): Promise<void> {
    if (!this.limits.enabled) return;
    const wait = (await this.upstreamUntil()) - this.store.now();
    if (wait > 0) throw protectionRefusal(ProtectionRefusalReason.upstreamRateLimit, wait);
  }

  private async upstreamUntil(): Promise<number> {
    const value = Number(await this.store.get(ProtectionKeys.apiBackoff));
    return Number.isFinite(value) ? value : 0;
  }

  /** Counts one code check against the caller's limit, or throws 429 `check_limit`. */
  async countCheck(clientKey: string | undefined): Promise<void> {
    await count(
      this.checkPerClient,
      clientKey === undefined ? undefined : this.keys.digest(clientKey),
      ProtectionRefusalReason.checkLimit,
    );
  }
}

/** The counter of `purpose`'s starts to `phoneNumber` under the limiter's prefix (the erasure names it too). */
export function purposeKey(keys: DataKeys, purpose: string, phoneNumber: string): string {
  return keys.digest(`${purpose}\n${phoneNumber}`);
}

type Count = readonly [
  limiter: StoreRateLimiter | undefined,
  key: string | undefined,
  reason: ProtectionRefusalReason,
  coarse?: boolean,
];

/**
 * Counts every limit at once. When one refuses, the first refusal in the given order is thrown and
 * keeps its point (its window's count says the limit was reached), as a limit counted alone does;
 * every other point is given back, as if those after it had never been counted.
 */
async function countAll(counts: readonly Count[]): Promise<ProtectionHold> {
  const outcomes = await Promise.allSettled(
    counts.map(async ([limiter, key, reason, coarse]) => {
      if (limiter === undefined || key === undefined) return { hold: NOTHING_HELD };
      const outcome = await limiter.tryConsume(key);
      const hold: ProtectionHold = { release: () => limiter.refund(key) };
      if (outcome.allowed) return { hold };
      const waitMs = coarse ? coarseWaitMs(outcome.msBeforeNext, limiter.windowMs) : outcome.msBeforeNext;
      return { hold, refusal: protectionRefusal(reason, waitMs) };
    }),
  );
  let first = -1;
  const holds: ProtectionHold[] = [];
  for (const [i, o] of outcomes.entries())
    if (first === -1 && (o.status === 'rejected' || o.value.refusal !== undefined)) first = i;
    else if (o.status === 'fulfilled') holds.push(o.value.hold);
  const release = async (): Promise<void> => {
    await Promise.all(holds.map((hold) => hold.release()));
  };
  if (first === -1) return { release };
  await release().catch(() => undefined);
  const failed = outcomes[first]!;
  throw failed.status === 'rejected' ? failed.reason : failed.value.refusal;
}

async function count(
  limiter: StoreRateLimiter | undefined,
  key: string | undefined,
  reason: ProtectionRefusalReason,
  coarse = false,
): Promise<ProtectionHold> {
  if (limiter === undefined || key === undefined) return NOTHING_HELD;
  const outcome = await limiter.tryConsume(key);
  if (!outcome.allowed)
    throw protectionRefusal(
      reason,
      coarse ? coarseWaitMs(outcome.msBeforeNext, limiter.windowMs) : outcome.msBeforeNext,
    );
  return { release: () => limiter.refund(key) };
}

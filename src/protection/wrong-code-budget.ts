import type { VerificationStore } from '../store/verification-store.interface.js';
import type { RateLimit } from '../options/verification.options.js';
import type { DataKeys } from '../core/data-keys.js';
import { ProtectionKeys } from './protection-keys.js';
import { coarseWaitMs, ProtectionRefusalReason, protectionRefusal } from '../core/refusal-reason.js';
import { StoreRateLimiter, type ConsumeOutcome } from './store-rate-limiter.js';

/** A check's share of the wrong-code budgets, taken before the API is asked. */
export interface WrongCodeHold {
  /** Keeps the point when the API said the code was wrong, gives it back otherwise. Never throws. */
  settle(wrongCode: boolean): Promise<void>;
}

const NOTHING_HELD: WrongCodeHold = { settle: async () => undefined };

interface Budget {
  limiter: StoreRateLimiter;
  key: string;
  reason: ProtectionRefusalReason;
  /** Caused by other callers too: the wait is given coarsely. */
  coarse: boolean;
}

/**
 * Wrong codes across sessions: the API's attempts are per session, so without this a number takes
 * a few wrong codes per session times every session its start limits allow. Per phone number (all
 * callers) and per owner (when `owner()` answers), at most `points` wrong codes per window; past
 * either, checks and new starts of that number (or by that owner) answer 429
 * `too_many_wrong_codes` until the window ends.
 *
 * A check takes its point before the API is asked (so concurrent guesses cannot overshoot) and
 * gives it back unless the API answered that the code was wrong.
 */
export class WrongCodeBudget {
  private readonly perPhone: StoreRateLimiter | undefined;
  private readonly perOwner: StoreRateLimiter | undefined;

  constructor(
    store: VerificationStore,
    limits: { wrongCodesPerPhone: RateLimit | false; wrongCodesPerOwner: RateLimit | false },
    private readonly keys: DataKeys,
  ) {
    this.perPhone = StoreRateLimiter.forLimit(
      store,
      ProtectionKeys.wrongCodesPerPhone,
      limits.wrongCodesPerPhone,
    );
    this.perOwner = StoreRateLimiter.forLimit(
      store,
      ProtectionKeys.wrongCodesPerOwner,
      limits.wrongCodesPerOwner,
    );
  }

  /** Refuses a start (taking nothing) while the number's or the owner's wrong codes are used up. */
  async assertStartAllowed(phoneNumber: string, owner: string | undefined): Promise<void> {
    const budgets = this.budgets(phoneNumber, owner);
    const peeks: Promise<ConsumeOutcome>[] = [];
    for (const b of budgets) peeks.push(b.limiter.peek(b.key));
    const outcomes = await Promise.all(peeks);
    for (const [i, outcome] of outcomes.entries()) if (!outcome.allowed) throw refusal(budgets[i], outcome);
  }

  /** Takes a point of each budget for a check that is about to ask the API, or throws 429. */
  async holdCheck(phoneNumber: string, owner: string | undefined): Promise<WrongCodeHold> {
    const taken: Budget[] = [];
    const giveBack = async (): Promise<void> => {
      for (const b of taken) await b.limiter.refund(b.key).catch(() => undefined);
    };
    for (const budget of this.budgets(phoneNumber, owner)) {
      const outcome = await budget.limiter.tryConsume(budget.key);
      if (!outcome.allowed) {
        await giveBack();
        throw refusal(budget, outcome);
      }
      taken.push(budget);
    }
    if (taken.length === 0) return NOTHING_HELD;
    return { settle: async (wrongCode) => (wrongCode ? undefined : giveBack()) };
  }

  private budgets(phoneNumber: string, owner: string | undefined): Budget[] {
    const budgets: Budget[] = [];
    if (this.perPhone)
      budgets.push({
        limiter: this.perPhone,
        key: this.keys.digest(phoneNumber),
        reason: ProtectionRefusalReason.wrongCodesPhone,
        coarse: true,
      });
    if (this.perOwner && owner !== undefined)
      budgets.push({
        limiter: this.perOwner,
        key: this.keys.digest(owner),
        reason: ProtectionRefusalReason.wrongCodesOwner,
        coarse: false,
      });
    return budgets;
  }
}

function refusal(budget: Budget, outcome: ConsumeOutcome) {
  const waitMs = budget.coarse
    ? coarseWaitMs(outcome.msBeforeNext, budget.limiter.windowMs)
    : outcome.msBeforeNext;
  return protectionRefusal(budget.reason, waitMs);
}

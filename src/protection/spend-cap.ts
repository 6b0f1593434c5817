import type { KnownVerificationMethod, Money } from '../api/api.types.js';
import { VerificationOpsEventName, type SpendCapReachedEvent } from '../core/verification-events.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { toMajorUnits, toMinorUnits } from '../core/money.js';
import { methodTraits, type MethodBilling } from '../core/verification-method.js';
import type { PriceEstimator } from './price-estimator.js';
import type { ProtectionHold } from './protection-hold.js';
import type { ProtectionLog } from '../observability/protection-log.js';
import { ProtectionKeys } from './protection-keys.js';
import { protectionRefusal, ProtectionRefusalReason } from './protection-refusals.js';
import { StoreRateLimiter } from './store-rate-limiter.js';

export interface SpendCapSettings {
  /** Major units (RUB). */
  amount: number;
  windowMs: number;
  currency: string;
  /** Windows start at midnight of this UTC offset when `windowMs` is a day (0: UTC). */
  utcOffsetMinutes: number;
  /** Major units reserved for a method with no known price (see PriceEstimator). */
  worstCasePrice: number;
}

/** A start's share of the window's budget, held from before the initiation until its real cost is known. */
export interface SpendReservation extends ProtectionHold {
  /**
   * Replaces the estimate with the real `cost` (the estimate stays when the API gave none). With the
   * started `session`, a method the API charges only on proof or on delivery keeps it open until
   * the session ends (see `ended`).
   */
  settle(cost: Money | undefined, session?: { requestId: string; expiresAt: number }): Promise<void>;
}

/** How a session ended, as far as its charge goes. */
export interface SessionEnd {
  verified: boolean;
  /** The code or call went out (the record's `delivered`). */
  delivered: boolean;
}

/** Whether the API charges a session of this billing that ended so. */
export function chargedAtEnd(billing: MethodBilling, end: SessionEnd): boolean {
  if (billing === 'on_verified') return end.verified;
  if (billing === 'on_delivery') return end.verified || end.delivered;
  return true;
}

/**
 * How long an open reservation is remembered past its session's expiry (a late webhook, the
 * reconciler's grace); an outcome learned later leaves it charged (the safe side).
 */
const OPEN_SLACK_MS = 3_600_000;

/**
 * The spend cap: at most `amount` per window, counted from the `cost` of each initiation, in
 * integer minor units in the store (one counter per window, shared by every instance). It counts
 * what the API charges: a method charged on proof (reverse flash call) gives its reservation back
 * when its session ends unverified, one charged on delivery (SMS, flash call, the bot) when it ends
 * undelivered; per-attempt methods keep it. So starts to numbers that receive nothing cannot fill
 * the cap and shut real users out.
 *
 * The cost is known only after the API answered, so a start first reserves an estimate (the
 * method's current price, or `worstCasePrice` while it is not known) and is refused when the
 * reservation would pass the cap: concurrent starts cannot overshoot it. The reservation is then settled with the real cost, or given back
 * when the API answered that nothing was sent. Windows are aligned on the epoch of the store's
 * clock shifted by `utcOffsetMinutes` (a 24 h window is a day from midnight at that offset, UTC by
 * default). The first refusal in a window emits
 * `verification.spend_cap_reached`, once per window across instances (a claim in the store).
 */
export class SpendCap {
  private readonly limiter: StoreRateLimiter;
  private readonly capMinor: number;

  constructor(
    private readonly store: VerificationStore,
    private readonly settings: SpendCapSettings,
    private readonly prices: PriceEstimator,
    private readonly emit: (event: SpendCapReachedEvent) => void,
    private readonly logger: ProtectionLog,
  ) {
    this.capMinor = toMinorUnits(settings.amount) ?? 0;
    this.limiter = new StoreRateLimiter(store, {
      keyPrefix: ProtectionKeys.spend,
      points: this.capMinor,
      windowMs: settings.windowMs,
    });
  }

  /**
   * Reserves the method's estimated cost in the current window, or throws 503 `spend_cap`. `keepShare`:
   * the share of the cap this start may not take (the last share, kept for methods charged on proof
   * and callers with a record: nobody can spend the cap to shut real users out).
   */
  async reserve(method: KnownVerificationMethod, keepShare = 0): Promise<SpendReservation> {
    const estimate = await this.prices.estimateMinor(method);
    const { key, windowEndsAt } = this.currentWindow();
    const ttl = (): number => Math.max(windowEndsAt - this.store.now(), 1);
    const outcome = await this.limiter.tryConsume(key, estimate, ttl());
    if (outcome.allowed && keepShare > 0 && outcome.consumed > this.capMinor * (1 - keepShare)) {
      await this.limiter.refund(key, estimate, ttl()).catch(() => undefined);
      throw protectionRefusal(ProtectionRefusalReason.spendCap, windowEndsAt - this.store.now(), {
        last_share: true,
      });
    }
    if (!outcome.allowed) {
      await this.limiter.refund(key, estimate, ttl()).catch(() => undefined);
      await this.announce(key, windowEndsAt, outcome.consumed - estimate);
      throw protectionRefusal(ProtectionRefusalReason.spendCap, windowEndsAt - this.store.now());
    }
    let open = true;
    return {
      settle: async (cost, session) => {
        if (!open) return;
        open = false;
        if (cost) this.prices.learn(method, cost);
        const real = cost === undefined ? undefined : toMinorUnits(cost.amount);
        if (real !== undefined && real > estimate) await this.limiter.charge(key, real - estimate, ttl());
        else if (real !== undefined && real < estimate)
          await this.limiter.refund(key, estimate - real, ttl());
        const billing = methodTraits(method).billing;
        const kept = real ?? estimate;
        if (session && billing !== 'on_initiation' && kept > 0)
          await this.store.set(
            ProtectionKeys.spendOpen(session.requestId),
            JSON.stringify({ key, windowEndsAt, minor: kept, billing }),
            Math.max(session.expiresAt - this.store.now(), 0) + OPEN_SLACK_MS,
          );
      },
      release: async () => {
        if (!open) return;
        open = false;
        await this.limiter.refund(key, estimate, ttl());
      },
    };
  }

  /**
   * A session ended: its reservation, kept open by `settle`, is given back when the API does not
   * charge it (see chargedAtEnd), once. Nothing is known of a session started elsewhere or too long
   * ago: nothing is given back.
   */
  async ended(requestId: string, end: SessionEnd): Promise<void> {
    const k = ProtectionKeys.spendOpen(requestId);
    const value = await this.store.get(k);
    if (value === null) return;
    await this.store.delete(k);
    let open: { key: string; windowEndsAt: number; minor: number; billing: MethodBilling };
    try {
      open = JSON.parse(value) as typeof open;
    } catch {
      return;
    }
    if (chargedAtEnd(open.billing, end) || !(open.minor > 0)) return;
    await this.limiter.refund(open.key, open.minor, Math.max(open.windowEndsAt - this.store.now(), 1));
  }

  /** Share of the current window's cap spent or reserved (1 and above: reached). */
  async spentShare(): Promise<number> {
    const { key } = this.currentWindow();
    const consumed = Number(await this.store.get(this.limiter.storeKey(key)));
    return Number.isFinite(consumed) && consumed > 0 ? consumed / Math.max(this.capMinor, 1) : 0;
  }

  private currentWindow(): { key: string; windowEndsAt: number } {
    const offsetMs = this.settings.utcOffsetMinutes * 60_000;
    const windowIndex = Math.floor((this.store.now() + offsetMs) / this.settings.windowMs);
    const windowEndsAt = (windowIndex + 1) * this.settings.windowMs - offsetMs;
    return { key: this.windowKey(windowIndex), windowEndsAt };
  }

  /**
   * The window's name in the store. With an offset the same index is another stretch of time, so
   * the offset is part of the name: a deployment that changes it does not reuse older counters.
   */
  private windowKey(windowIndex: number): string {
    const offset = this.settings.utcOffsetMinutes;
    return offset === 0 ? String(windowIndex) : `${windowIndex}@${offset}`;
  }

  /** Emits the event once per window (the first instance to claim it does). */
  private async announce(window: string, windowEndsAt: number, spentMinor: number): Promise<void> {
    const ttl = Math.max(windowEndsAt - this.store.now(), 1);
    try {
      if (!(await this.store.setIfAbsent(ProtectionKeys.spendCapEvent(window), '1', ttl))) return;
    } catch {
      return; // The refusal matters more than the alert; the next refusal tries again.
    }
    this.logger.warn('spend cap reached: starts are refused until the window ends', {
      spent: toMajorUnits(spentMinor),
      cap: this.settings.amount,
      currency: this.settings.currency,
      window_ends_at: new Date(windowEndsAt).toISOString(),
    });
    this.emit({
      event: VerificationOpsEventName.spendCapReached,
      spent: toMajorUnits(Math.max(spentMinor, 0)),
      cap: this.settings.amount,
      currency: this.settings.currency,
      windowMs: this.settings.windowMs,
      windowEndsAt: new Date(windowEndsAt),
    });
  }
}

/**
 * In production, a deployment whose starts nothing bounds in money (no spend cap, no `beforeStart`
 * hook such as a captcha) is told so at boot: the per-client and per-phone limits alone let many
 * addresses and numbers spend without end.
 */
export function warnWhenSpendUnbounded(
  limits: { spendCap: unknown; beforeStart?: unknown },
  logger: ProtectionLog,
  nodeEnv = process.env.NODE_ENV,
): void {
  if (nodeEnv !== 'production' || limits.spendCap !== false || limits.beforeStart !== undefined) return;
  logger.warn(
    'limits.spendCap is off and no limits.beforeStart hook is set: nothing bounds what starts from many addresses can spend. Set limits.spendCap ({ amount, windowMs }) or a beforeStart check (captcha).',
  );
}

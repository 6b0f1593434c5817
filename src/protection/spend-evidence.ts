import { DAY_MS } from '../core/clock.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { ProtectionKeys } from './protection-keys.js';
import { StoreRateLimiter, type StoreRateLimiterOptions } from './store-rate-limiter.js';

/** What the API charged for the sessions of one UTC date (`YYYY-MM-DD`), in minor units: `GET /v1/usage` (UsageReads). */
export interface ChargedOn {
  read(date: string): Promise<{ chargedMinor: number }>;
}

/** At most one usage read per window this often, across instances. */
const USAGE_EVERY_MS = 30_000;

/**
 * The cap's counter, which registrations sharing a store (one `keyPrefix`) pool, each change of it also
 * counted in its API account's own count (`ProtectionKeys.spendOwn`): what the usage reconcile compares
 * with that account's charges. Another account's sessions are not this account's to give back.
 */
export class SpendCounter extends StoreRateLimiter {
  constructor(
    store: VerificationStore,
    options: StoreRateLimiterOptions,
    /** The API account's scope (ProtectionKeys.spendAccount; none: the window alone). */
    private readonly scope: string | undefined,
  ) {
    super(store, options);
  }

  /** This account's own count of the window `key`. */
  ownKey(key: string): string {
    return ProtectionKeys.spendOwn(key, this.scope);
  }

  protected override async add(
    key: string,
    by: number,
    windowMs: number,
  ): Promise<{ value: number; expiresAt: number }> {
    if (by === 0) return super.add(key, by, windowMs);
    const ttl = Math.max(1, Math.round(windowMs));
    const [state] = await Promise.all([
      super.add(key, by, windowMs),
      this.store.increment(this.ownKey(key), by, ttl),
    ]);
    return state;
  }
}

/**
 * The spend cap's evidence of what was not charged. A reservation of a method charged on delivery
 * is open from the moment it is made and while its session lives (`live`); when the session ends without the module having seen a
 * delivery, that is no evidence the API charged nothing (a delivery during a read outage is charged
 * all the same), so the reservation stays counted as `unproven`. Only the API's own figure gives it
 * back: the day's `GET /v1/usage`. Every unproven session the API did not charge is in the window's
 * counter less what is still live less what the API charged, so that much (at most the unproven
 * total) comes back; and when the API charged more than the counter holds (proofs the module never
 * saw), the counter takes the difference, so the cap and `spend_cap_reached` follow what was paid.
 * Only for a cap window that is one UTC day: the usage figures are per UTC date.
 */
export class SpendEvidence {
  constructor(
    private readonly store: VerificationStore,
    /** The API's usage; none: nothing comes back before the window ends. */
    private readonly usage: ChargedOn | undefined,
    private readonly window: { windowMs: number; utcOffsetMinutes: number },
    /**
     * The API account's scope (ProtectionKeys.spendAccount; none: the window alone): its own count, live,
     * unproven and usage read, shared by the registrations on that account whatever their names.
     */
    readonly scope?: string,
  ) {}

  /**
   * A reservation is live from the moment it is made (its API call in flight is not yet in the API's
   * usage) and stays so while its session lives: `minor` more (or less, when negative) of it live.
   */
  async opened(window: string, minor: number, ttlMs: number): Promise<void> {
    if (minor === 0) return;
    await this.store.increment(ProtectionKeys.spendLive(window, this.scope), minor, ttlMs);
  }

  /** What a caller's proved sessions took of the window's proof reserve (its share of it). */
  async callerSpent(window: string, caller: string): Promise<number> {
    return Math.max(0, Number(await this.store.get(ProtectionKeys.spendCaller(window, caller))) || 0);
  }

  /** A proof took `minor` of the proof reserve: its callers' share of it (`callerSpent`). */
  async proved(window: string, callers: readonly string[], minor: number, ttlMs: number): Promise<void> {
    if (minor <= 0) return;
    const evictable = { evictable: true };
    await Promise.all(
      callers.map((c) =>
        this.store.increment(ProtectionKeys.spendCaller(window, c), minor, ttlMs, evictable),
      ),
    );
  }

  /** A session ended: charged as far as the module saw, or `unproven` (kept until usage says otherwise). */
  async ended(window: string, minor: number, ttlMs: number, unproven: boolean): Promise<void> {
    await Promise.all([
      this.store.increment(ProtectionKeys.spendLive(window, this.scope), -minor, ttlMs),
      unproven ? this.store.increment(ProtectionKeys.spendUnproven(window, this.scope), minor, ttlMs) : [],
    ]);
  }

  /**
   * Reconciles what this account's registrations counted in the window's `counter` (the cap's, maybe pooled with
   * other accounts': its own count, SpendCounter) with what the account's API says it charged (see the class); true when
   * something came back. At most once per USAGE_EVERY_MS across instances; a failed read changes
   * nothing (the safe side).
   */
  async reconcile(
    counter: SpendCounter,
    window: string,
    windowStartsAt: number,
    ttlMs: number,
  ): Promise<boolean> {
    if (this.usage === undefined || this.window.windowMs !== DAY_MS || this.window.utcOffsetMinutes !== 0)
      return false;
    const usageClaim = ProtectionKeys.spendUsage(window, this.scope);
    if (!(await this.store.setIfAbsent(usageClaim, '1', USAGE_EVERY_MS))) return false;
    let charged: number;
    try {
      charged = (await this.usage.read(new Date(windowStartsAt).toISOString().slice(0, 10))).chargedMinor;
    } catch {
      return false;
    }
    const number = async (key: string): Promise<number> =>
      Math.max(0, Number(await this.store.get(key)) || 0);
    const [counted, live, unproven] = await Promise.all([
      number(counter.ownKey(window)),
      number(ProtectionKeys.spendLive(window, this.scope)),
      number(ProtectionKeys.spendUnproven(window, this.scope)),
    ]);
    if (charged > counted) {
      await counter.charge(window, charged - counted, ttlMs);
      return false;
    }
    const back = Math.min(unproven, Math.max(0, counted - live - charged));
    if (back <= 0) return false;
    await this.store.increment(ProtectionKeys.spendUnproven(window, this.scope), -back, ttlMs);
    await counter.refund(window, back, ttlMs);
    return true;
  }
}

import type { KnownVerificationMethod, Money } from '../api/api.types.js';
import { VerificationOpsEventName, type SpendCapReachedEvent } from '../core/verification-events.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { toMajorUnits, toMinorUnits } from '../core/money.js';
import { methodTraits, type MethodBilling } from '../core/verification-method.js';
import type { PriceEstimator } from './price-estimator.js';
import type { ProtectionHold } from './protection-hold.js';
import type { ProtectionLog } from '../observability/protection-log.js';
import { ProtectionKeys } from './protection-keys.js';
import { protectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';
import { SpendCounter, type SpendEvidence } from './spend-evidence.js';
import { inProofReserve, proofReserveRefuses, type ProofTerms } from './proof-reserve.js';
import { restoredOpenSpend, storedOpenSpend, type OpenSpend } from './open-spend.js';

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
   * started `session`, a method the API charges on delivery keeps it open until the session ends,
   * and one charged on proof is counted then if proved (see `ended`).
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
 * what the API charges: a method charged on delivery (SMS, flash call) gives its reservation back
 * when its session ends undelivered; per-attempt methods keep it. A method charged on proof
 * (reverse flash call, the bot) reserves nothing: it is admitted while its price still fits and
 * counted in the window where its session ends proved, since only the number's owner can make the
 * host pay for it. So starts to numbers that receive nothing, or that nobody proves, cannot fill
 * the cap and shut real users out (a pending step the user left does not hold the cap either).
 * So the cap bounds what the host pays without a number owner's proof: proofs of sessions still
 * pending when it is reached count past it, each a call or a share from a number the prover holds.
 *
 * A start first reserves an estimate (the method's price, else `worstCasePrice`) and is refused when
 * it would pass the cap: concurrent starts cannot overshoot. It is settled with the real cost, or
 * given back when nothing was sent. Windows start at the store clock's epoch shifted by
 * `utcOffsetMinutes`. The first refusal in a window emits `verification.spend_cap_reached`, once
 * across instances (a claim in the store).
 */
export class SpendCap {
  private readonly limiter: SpendCounter;
  private readonly capMinor: number;

  constructor(
    private readonly store: VerificationStore,
    private readonly settings: SpendCapSettings,
    private readonly prices: PriceEstimator,
    private readonly evidence: SpendEvidence,
    /** Where the first refusal of a window is told (VerificationTelemetry). */
    private readonly report: { logger: ProtectionLog; announce(event: SpendCapReachedEvent): void },
  ) {
    this.capMinor = toMinorUnits(settings.amount) ?? 0;
    this.limiter = new SpendCounter(
      store,
      { keyPrefix: ProtectionKeys.spend, points: this.capMinor, windowMs: settings.windowMs },
      evidence.scope,
    );
  }

  /**
   * Reserves the method's estimated cost in the current window, or throws 503 `spend_cap`. `keepShare`:
   * the share of the cap this start may not take (the last share, kept for methods charged on proof
   * and callers with a record: nobody can spend the cap to shut real users out).
   */
  async reserve(
    method: KnownVerificationMethod,
    keepShare = 0,
    proof?: ProofTerms,
    final = false,
  ): Promise<SpendReservation> {
    const estimate = await this.prices.estimateMinor(method);
    const { key, windowEndsAt } = this.currentWindow();
    const ttl = (): number => Math.max(windowEndsAt - this.store.now(), 1);
    if (methodTraits(method).chargedOnProof)
      return this.admitOnProof(method, estimate, keepShare, { key, windowEndsAt }, { proof, final });
    // Live from the moment it is made (its API call may not have answered at a usage read).
    const [outcome] = await Promise.all([
      this.limiter.tryConsume(key, estimate, ttl()),
      this.evidence.opened(key, estimate, ttl()),
    ]);
    const lastShare = outcome.allowed && keepShare > 0 && outcome.consumed > this.capMinor * (1 - keepShare);
    if (lastShare || !outcome.allowed) {
      const back = [this.evidence.opened(key, -estimate, ttl()), this.limiter.refund(key, estimate, ttl())];
      await Promise.all(back).catch(() => undefined);
      // What the API says it did not charge comes back first (once); the start is then asked again.
      if (!final && (await this.reconciled(key, windowEndsAt)))
        return this.reserve(method, keepShare, proof, true);
    }
    if (lastShare) throw this.lastShareRefusal(windowEndsAt);
    if (!outcome.allowed) {
      await this.announce(key, windowEndsAt, outcome.consumed - estimate);
      throw protectionRefusal(ProtectionRefusalReason.spendCap, windowEndsAt - this.store.now());
    }
    let open = true;
    return {
      settle: async (cost, session) => {
        if (!open) return;
        open = false;
        const real = this.learnedMinor(method, cost);
        if (real !== undefined && real > estimate) await this.limiter.charge(key, real - estimate, ttl());
        else if (real !== undefined && real < estimate)
          await this.limiter.refund(key, estimate - real, ttl());
        const billing = methodTraits(method).billing;
        const kept = session && billing !== 'on_initiation' ? Math.max(0, real ?? estimate) : 0;
        if (kept > 0) await this.keepOpen(session!, { key, windowEndsAt, minor: kept, billing });
        await this.evidence.opened(key, kept - estimate, ttl()); // live: what stays open till its end
      },
      release: async () => {
        if (!open) return;
        open = false;
        await Promise.all([
          this.limiter.refund(key, estimate, ttl()),
          this.evidence.opened(key, -estimate, ttl()),
        ]);
      },
    };
  }

  /**
   * A start of a method charged on proof: refused as any start when its price would pass the cap
   * (or the share it may take), but nothing is reserved; its session is counted when it ends proved.
   */
  private async admitOnProof(
    method: KnownVerificationMethod,
    estimate: number,
    keepShare: number,
    { key, windowEndsAt }: { key: string; windowEndsAt: number },
    { proof, final }: { proof: ProofTerms | undefined; final: boolean },
  ): Promise<SpendReservation> {
    const consumed = Number(await this.store.get(this.limiter.storeKey(key))) || 0;
    const callerSpent =
      proof && inProofReserve(consumed, estimate, this.capMinor, proof)
        ? Math.max(0, ...(await Promise.all(proof.callers.map((c) => this.evidence.callerSpent(key, c)))))
        : 0;
    const reserveRefuses =
      proof !== undefined &&
      proofReserveRefuses({ consumed, estimate, capMinor: this.capMinor, callerSpent, terms: proof });
    const refused =
      reserveRefuses ||
      consumed + estimate > this.capMinor ||
      (keepShare > 0 && consumed + estimate > this.capMinor * (1 - keepShare));
    if (refused && !final && (await this.reconciled(key, windowEndsAt)))
      return this.reserve(method, keepShare, proof, true);
    if (consumed + estimate > this.capMinor) {
      await this.announce(key, windowEndsAt, consumed);
      throw protectionRefusal(ProtectionRefusalReason.spendCap, windowEndsAt - this.store.now());
    }
    if (reserveRefuses || (keepShare > 0 && consumed + estimate > this.capMinor * (1 - keepShare)))
      throw this.lastShareRefusal(windowEndsAt);
    let open = true;
    return {
      settle: async (cost, session) => {
        if (!open) return;
        open = false;
        const minor = this.learnedMinor(method, cost) ?? estimate;
        const billing = methodTraits(method).billing;
        // Without its session nothing would ever count it: counted now (the safe side).
        if (!session) await this.limiter.charge(key, minor, Math.max(windowEndsAt - this.store.now(), 1));
        else if (minor > 0)
          await this.keepOpen(session, {
            ...{ key, windowEndsAt, minor, billing, onProof: true },
            ...(proof
              ? { callers: proof.callers, reserveFrom: this.capMinor * (1 - proof.reserveShare) }
              : {}),
          });
      },
      release: async () => {
        open = false;
      },
    };
  }

  /** The API's real cost in minor units (undefined when it gave none), learned as the method's price. */
  private learnedMinor(method: KnownVerificationMethod, cost: Money | undefined): number | undefined {
    if (!cost) return undefined;
    this.prices.learn(method, cost);
    return toMinorUnits(cost.amount);
  }

  /** Reconciles the window with the API's usage (SpendEvidence); true when something came back. */
  private reconciled(key: string, windowEndsAt: number): Promise<boolean> {
    const ttl = Math.max(windowEndsAt - this.store.now(), 1);
    const start = windowEndsAt - this.settings.windowMs;
    return this.evidence.reconcile(this.limiter, key, start, ttl).catch(() => false);
  }

  private lastShareRefusal(windowEndsAt: number): Error {
    return protectionRefusal(ProtectionRefusalReason.spendCap, windowEndsAt - this.store.now(), {
      last_share: true,
    });
  }

  private async keepOpen(session: { requestId: string; expiresAt: number }, open: OpenSpend): Promise<void> {
    const ttl = Math.max(session.expiresAt - this.store.now(), 0) + OPEN_SLACK_MS;
    await this.store.set(ProtectionKeys.spendOpen(session.requestId), storedOpenSpend(open), ttl);
  }

  /**
   * A session ended: its reservation, kept open by `settle`, is given back when the API does not
   * charge it (see chargedAtEnd), once; a session charged on proof is counted now when it was proved
   * (in the current window: the API charges it now), by whichever caller claims the end first.
   * Nothing is known of a session started elsewhere or too long ago: nothing is given back, nor counted.
   */
  async ended(requestId: string, end: SessionEnd): Promise<void> {
    const k = ProtectionKeys.spendOpen(requestId);
    const value = await this.store.get(k);
    if (value === null) return;
    // Two instances may learn of the end at once (a webhook on one, a poll on another): the one that
    // claims it acts, so a reservation is not given back, nor a proof counted, twice.
    if (!(await this.store.setIfAbsent(ProtectionKeys.spendEnded(requestId), '1', OPEN_SLACK_MS))) return;
    await this.store.delete(k);
    let open: OpenSpend;
    try {
      open = restoredOpenSpend(value);
    } catch {
      return;
    }
    if (!(open.minor > 0)) return;
    const charged = chargedAtEnd(open.billing, end);
    if (open.onProof) {
      if (!charged) return;
      const now = this.currentWindow();
      const ttl = Math.max(now.windowEndsAt - this.store.now(), 1);
      const after = await this.limiter.charge(now.key, open.minor, ttl);
      // A caller's share of the reserve is what its proofs took of it (proof-reserve.ts).
      const taken = Math.min(open.minor, Math.max(0, after - (open.reserveFrom ?? 0)));
      await this.evidence.proved(now.key, open.callers ?? [], taken, ttl);
      return;
    }
    // Nothing the module saw is evidence of what the API did not charge: kept until usage says (SpendEvidence).
    await this.evidence.ended(
      open.key,
      open.minor,
      Math.max(open.windowEndsAt - this.store.now(), 1),
      !charged,
    );
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
    this.report.logger.warn('spend cap reached: starts are refused until the window ends', {
      spent: toMajorUnits(spentMinor),
      cap: this.settings.amount,
      currency: this.settings.currency,
      window_ends_at: new Date(windowEndsAt).toISOString(),
    });
    this.report.announce({
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

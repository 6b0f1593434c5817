import { Inject, Injectable, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import {
  VerificationEventName,
  type FraudSuspectedEvent,
  type SpendCapReachedEvent,
  type VerificationEvent,
} from '../core/verification-events.js';
import { PriceBook } from '../account/price-book.js';
import { UsageReads } from '../ledger/usage-reads.js';
import type { VerificationLogger } from '../observability/verification-logger.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { runStartHooks } from './start-hooks.js';
import { clientKeyOf, freeCallersOf, limitsCallerOf, starterOf } from './start-callers.js';
import { toMinorUnits } from '../core/money.js';
import { PriceEstimator } from './price-estimator.js';
import { defined, releaseAll, takenInOrder, type ProtectionHold } from './protection-hold.js';
import { ProtectionKeys } from './protection-keys.js';
import { PumpingDefence } from './pumping-defence.js';
import type { BurstMarks } from './range-bursts.js';
import { RequestRateLimits } from './request-rate-limits.js';
import { UpstreamBackOff } from './upstream-back-off.js';
import { ResendCooldown } from './resend-cooldown.js';
import { SpendCap, warnWhenSpendUnbounded, type SpendReservation } from './spend-cap.js';
import { StartCoalescer, type CoalescingClaim } from './start-coalescer.js';
import { StartPermit } from './start-permit.js';
import { WrongCodeBudget, type WrongCodeHold } from './wrong-code-budget.js';
import { methodTraits } from '../core/verification-method.js';
import { ProtectionRefusalReason } from './protection-refusals.js';
import { graded, readStart, type StartReading } from './start-reading.js';
import { admitTestStart as admitTest, type TestAdmission } from './test-start-admission.js';
import type { GradedAnswer } from './pumping-defence.js';
import type { HandBack, StartCandidate } from './verification-protection.types.js';
import { errorText } from '../core/error-text.js';

export type { HandBack, StartCandidate, StartedSession } from './verification-protection.types.js';
export type { StartPermit, StartRollback } from './start-permit.js';
/** The outcomes that end a session and settle its open spend reservation (`verified_again` is charged too). */
const SESSION_ENDS = ['verified', 'verifiedAgain', 'failed', 'expired'] as const;

/** Slack of a start's coalescing claim beyond the API timeout: the hook and the store calls. */
const CLAIM_SLACK_MS = 10_000;

/**
 * Protection of the host's money and users on the client routes: start and check limits, resend
 * cooldown, coalescing, spend cap, the API's 429 back-off and `beforeStart` (the allowlists run
 * before, in PhoneNumberNormalizer). All state is in the VerificationStore, shared by instances.
 * A journey's switch is a start like any other (`admitSwitch`: no coalescing). The order of a start's
 * checks, and why: docs/protection.md.
 */
@Injectable()
export class VerificationProtection implements OnModuleInit, OnModuleDestroy {
  private readonly limits: RequestRateLimits;
  private readonly backOff: UpstreamBackOff;
  private readonly pumping: PumpingDefence;
  private readonly onVerified = (event: VerificationEvent): Promise<void> => this.countVerified(event);
  private readonly onEnded = (event: VerificationEvent): Promise<void> => this.sessionEnded(event);
  private readonly cooldown: ResendCooldown;
  private readonly coalescer: StartCoalescer | undefined;
  private readonly spendCap: SpendCap | undefined;
  private readonly wrongCodes: WrongCodeBudget;
  private readonly logger: VerificationLogger;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) store: VerificationStore,
    prices: PriceBook,
    telemetry: VerificationTelemetry,
    @Optional() private readonly emitter?: EventEmitter2,
    @Optional() private readonly records?: SessionRecordRepository,
    @Optional() usage?: UsageReads,
  ) {
    const { logger, metrics } = telemetry;
    this.logger = logger;
    const limits = options.limits;
    warnWhenSpendUnbounded(limits, logger);
    this.limits = new RequestRateLimits(store, limits, options.dataKeys, options.purposes);
    this.backOff = new UpstreamBackOff(store);
    this.cooldown = new ResendCooldown(store, limits.resendCooldownMs, options.dataKeys);
    this.wrongCodes = new WrongCodeBudget(store, limits, options.dataKeys);
    this.coalescer = limits.coalesceStarts
      ? new StartCoalescer(store, { claimTtlMs: options.api.timeoutMs + CLAIM_SLACK_MS })
      : undefined;
    this.spendCap = limits.spendCap
      ? new SpendCap(
          store,
          limits.spendCap,
          new PriceEstimator(prices, toMinorUnits(limits.spendCap.worstCasePrice) ?? 0),
          (event) => this.emit(event),
          this.logger,
          usage ? async (date) => (await usage.read(date)).chargedMinor : undefined,
        )
      : undefined;
    const spendCap = this.spendCap;
    this.pumping = new PumpingDefence(
      store,
      limits.pumping,
      limits.ipv6PrefixLength,
      {
        logger,
        emit: (event) => this.emit(event),
        fraudSuspected: (reason, mode) => metrics.fraudSuspected(reason, mode),
        refusal: (reason, mode) => metrics.pumpingRefusal(reason, mode),
        spentShare: spendCap ? () => spendCap.spentShare() : undefined,
      },
      options.dataKeys,
    );
  }

  /** Completed verifications feed the pumping defence (the tracker emits each once per deployment). */
  onModuleInit(): void {
    if (this.pumping.enabled) this.emitter?.on(VerificationEventName.verified, this.onVerified);
    if (this.spendCap)
      for (const name of SESSION_ENDS) this.emitter?.on(VerificationEventName[name], this.onEnded);
  }

  onModuleDestroy(): void {
    this.emitter?.off(VerificationEventName.verified, this.onVerified);
    for (const name of SESSION_ENDS) this.emitter?.off(VerificationEventName[name], this.onEnded);
  }

  /** The caller's rate-limit key: the host's `limits.key(req)`, else the client IP (IPv6 by its network prefix). */
  clientKey(request: unknown, ip: string | undefined): string | undefined {
    return clientKeyOf(this.options.limits, request, ip);
  }

  /**
   * Admits one start, or throws its refusal after giving back whatever it took. A pending session of
   * the same owner (or, without one, the same browser key) + phone + method is handed back instead
   * (coalescing; `stale`: a handed-back session the caller found ended): identical concurrent starts
   * share one outcome, in one process as across instances. Otherwise the start takes its share of
   * every limit (in docs/protection.md's order) and gets the permit it settles after the upstream call (see
   * StartPermit). Protection is asked once and never calls back.
   */
  async admitStart(candidate: StartCandidate, stale?: string): Promise<HandBack | StartPermit> {
    if (!this.coalescer || starterOf(candidate) === undefined) return this.admit(candidate, undefined);
    // The claim and the reading go together (one round trip); a duplicate's reading is not used.
    const reading = this.read(candidate);
    reading.catch(() => undefined);
    // A claim won after another start's ended: read again, after it.
    return this.coalesced(candidate, stale, (claimed) =>
      this.admit(candidate, claimed, claimed?.contested ? undefined : reading),
    );
  }

  /** A test number's start (see `admitTestStart`), coalesced as a real one's: its identical start is handed back. */
  admitTestStart(candidate: StartCandidate, stale?: string): Promise<HandBack | TestAdmission> {
    return this.coalesced(candidate, stale, (claimed) =>
      admitTest(this.cooldown, this.limits, candidate, claimed),
    );
  }

  /** A test number's switch: as a real switch, never coalesced. */
  admitTestSwitch = (c: StartCandidate): Promise<TestAdmission> => admitTest(this.cooldown, this.limits, c);

  /** The starter's identical pending session to hand back, else `admit` under the claim (none: not coalesced). */
  private coalesced<T>(
    candidate: StartCandidate,
    stale: string | undefined,
    admit: (claimed?: CoalescingClaim) => Promise<T>,
  ): Promise<HandBack | T> {
    const starter = starterOf(candidate);
    if (!this.coalescer || starter === undefined) return admit();
    const { phoneNumber: phone, method, purpose } = candidate;
    const key = ProtectionKeys.coalesce(this.options.dataKeys, starter, phone, method, purpose);
    const handBackUntil = () => this.cooldown.availableAt(phone, method, limitsCallerOf(candidate));
    return this.coalescer.admit(key, { stale, admit, handBackUntil });
  }

  /** Admits a journey's switch: a start like any other, but never coalesced (the journey's step claim keeps it single). */
  admitSwitch(candidate: StartCandidate): Promise<StartPermit> {
    return this.admit(candidate, undefined);
  }

  private read(candidate: StartCandidate): Promise<StartReading> {
    return readStart(
      candidate,
      this.wrongCodes,
      this.pumping,
      this.options.limits.enabled ? this.backOff : undefined,
    );
  }

  private async admit(
    candidate: StartCandidate,
    coalescing: CoalescingClaim | undefined,
    reading: Promise<StartReading> = this.read(candidate),
  ): Promise<StartPermit> {
    const { pumping, wrongCodes } = await reading;
    const hooks = runStartHooks(this.options.limits, candidate, this.pumping.signal(pumping), this.logger);
    const { assessment, challengePassed } = await hooks;
    wrongCodes();
    const caller = limitsCallerOf(candidate);
    const grade = this.gradeOf(candidate);
    const holds: ProtectionHold[] = [];
    let reservation: SpendReservation | undefined;
    let resendAvailableAt: Date | null = null;
    let reachable: Promise<void> | undefined;
    try {
      // The cooldown and the limits together (one round trip) with the defence's burst marks (given back
      // on a refusal), before the defence counts: a start they refuse is never counted there. A start the
      // reading condemns is marked and counted as it is refused.
      const condemned = this.pumping.mayRefuseOnReading(pumping, challengePassed);
      const taken = await takenInOrder([
        this.cooldown
          .claim(candidate.phoneNumber, candidate.method, { caller, starter: starterOf(candidate) })
          .then((claim) => {
            resendAvailableAt = claim.availableAt;
            return claim.hold;
          }),
        methodTraits(candidate.method).chargedOnProof
          ? this.limits.countFreeStart(freeCallersOf(candidate, this.options.limits))
          : undefined,
        // Under grading a start of a method charged on proof spends its free budget instead of the
        // per-address limit, and any other start past it is graded (409 `method_held`).
        this.limits
          .countStart(grade?.proofCharged ? undefined : candidate.clientKey, candidate.phoneNumber, caller)
          .catch((error: unknown) => {
            throw graded(error, grade, ProtectionRefusalReason.startIpLimit);
          }),
        this.limits.countPurposeStart(candidate.purpose, candidate.phoneNumber),
        condemned || !pumping ? undefined : this.pumping.mark(pumping),
      ]);
      const marked = taken.pop() as BurstMarks | undefined;
      holds.push(...defined(taken));
      const count = (): Promise<ProtectionHold> =>
        this.pumping.admit(pumping, challengePassed, grade, marked);
      const reserve = (): Promise<SpendReservation | undefined> => this.reserve(candidate, pumping, grade);
      // The store probe before paying (PaidStart awaits it), with the last writes; never unhandled.
      (reachable = this.records?.ensureReachable())?.catch(() => undefined);
      if (condemned) {
        // A start the reading condemns is counted, and refused, before anything is reserved for it.
        holds.push(await count());
        reservation = await reserve();
      } else {
        // Else together (one round trip): a verdict concurrent starts change gives the reservation back.
        const [hold, reserved] = await takenInOrder([count(), reserve()]);
        holds.push(hold!);
        reservation = reserved as SpendReservation | undefined;
      }
    } catch (error) {
      await releaseAll([...holds, reservation]);
      throw error;
    }
    return new StartPermit(
      {
        resendAvailableAt,
        claim: coalescing,
        holds,
        reservation,
        reachable,
        suspected: this.pumping.suspects(pumping),
        ...(assessment ? { assessment: assessment.facts } : {}),
        attribute: (session) => this.pumping.started(pumping, session.requestId, session.expiresAt),
        ...(this.options.limits.enabled ? { backOff: (ms: number) => this.backOff.hold(ms) } : {}),
      },
      this.logger,
    );
  }

  /** The graded answer's terms for this start, when grading is on (see GradedAnswer). */
  private gradeOf(candidate: StartCandidate): GradedAnswer | undefined {
    if (!this.options.limits.pumping.grading || this.options.limits.pumping.mode !== 'enforce')
      return undefined;
    return {
      proofCharged: methodTraits(candidate.method).chargedOnProof,
      offered: (candidate.offered ?? []).filter((m) => methodTraits(m).chargedOnProof),
    };
  }

  /**
   * The spend reservation. The cap's last share (`limits.pumping.reserveShare`) is kept for methods
   * charged on proof (each caller's share of it, see proof-reserve.ts) and callers with a record; a
   * start the cap cannot afford is graded (409 `method_held`) while a method charged on proof is offered.
   */
  private async reserve(
    candidate: StartCandidate,
    pumping: Awaited<ReturnType<PumpingDefence['assess']>>,
    grade: GradedAnswer | undefined,
  ): Promise<SpendReservation | undefined> {
    if (!this.spendCap) return undefined;
    const onProof = methodTraits(candidate.method).chargedOnProof;
    const known = this.pumping.knownCaller(pumping);
    // Monitor mode reports and never acts: the whole cap is open to everyone.
    const enforced = this.options.limits.pumping.mode === 'enforce';
    const { reserveShare } = this.options.limits.pumping;
    const keep = enforced && !onProof && !known ? reserveShare : 0;
    const callers = (): string[] =>
      freeCallersOf(candidate, this.options.limits).map((c) => this.options.dataKeys.digest(c));
    const proof = enforced && onProof ? { callers: callers(), known, reserveShare } : undefined;
    return this.spendCap.reserve(candidate.method, keep, proof).catch((error: unknown) => {
      throw graded(error, grade, ProtectionRefusalReason.spendCap);
    });
  }

  /** Refuses a check past the caller's check limit (429 `check_limit`). */
  async assertCheckAllowed(clientKey: string | undefined): Promise<void> {
    await this.limits.countCheck(clientKey);
  }

  /**
   * Takes a point of the number's (and the owner's) wrong-code budget for a check about to ask the
   * API, or throws 429 `too_many_wrong_codes`. Settle it with whether the API said the code was wrong.
   */
  async holdWrongCode(phoneNumber: string, owner: string | undefined): Promise<WrongCodeHold> {
    return this.wrongCodes.holdCheck(phoneNumber, owner);
  }

  private emit(event: SpendCapReachedEvent | FraudSuspectedEvent): void {
    // Not awaited: a slow alerting listener must not hold the refused request.
    const { name } = this.options;
    const payload = name === undefined ? event : { ...event, registration: name };
    this.emitter?.emitAsync(event.event, payload).catch((error: unknown) => {
      this.logger.error(`a ${event.event.replace('verification.', '')} listener failed`, {
        error: errorText(error),
      });
    });
  }

  /** A session ended: the spend cap settles its reservation (SpendCap.ended). Never throws; a failure keeps it. */
  private async sessionEnded(event: VerificationEvent): Promise<void> {
    try {
      const verified = event.status === 'verified';
      // Without the record, nothing says it went undelivered: it is kept (charged).
      const record = verified ? null : await this.records?.get(event.requestId);
      const delivered = verified || (record ? record.delivered === true : true);
      await this.spendCap?.ended(event.requestId, { verified, delivered });
    } catch (error) {
      this.logger.warn('spend cap: an ended session could not be settled', { error: errorText(error) });
    }
  }

  /** Never throws: a failing count must not make the tracker deliver the event again. */
  private async countVerified(event: VerificationEvent): Promise<void> {
    // A test number's verification converts nothing: protection never counted its start either. Another
    // registration's event is its own protection's to count.
    if (event.test || event.registration !== this.options.name) return;
    try {
      await this.pumping.verified(event);
    } catch (error) {
      this.logger.warn('pumping defence: a verification could not be counted', { error: errorText(error) });
    }
  }
}

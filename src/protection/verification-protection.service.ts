import { Inject, Injectable, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import {
  VerificationEventName,
  type FraudSuspectedEvent,
  type SpendCapReachedEvent,
  type VerificationEvent,
} from '../core/verification-events.js';
import { PriceBook } from '../account/price-book.js';
import type { VerificationLogger } from '../observability/verification-logger.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { runBeforeStart } from './before-start-hook.js';
import { clientKeyOf, limitsCallerOf, starterOf } from './start-callers.js';
import { toMinorUnits } from '../core/money.js';
import { PriceEstimator } from './price-estimator.js';
import { releaseAll, type ProtectionHold } from './protection-hold.js';
import { ProtectionKeys } from './protection-keys.js';
import { PumpingDefence } from './pumping-defence.js';
import { RequestRateLimits } from './request-rate-limits.js';
import { ResendCooldown } from './resend-cooldown.js';
import { SpendCap, warnWhenSpendUnbounded, type SpendReservation } from './spend-cap.js';
import { StartCoalescer, type CoalescingClaim } from './start-coalescer.js';
import { StartPermit } from './start-permit.js';
import { WrongCodeBudget, type WrongCodeHold } from './wrong-code-budget.js';
import { methodTraits } from '../core/verification-method.js';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import { protectionRefusal, ProtectionRefusalReason } from './protection-refusals.js';
import type { GradedAnswer } from './pumping-defence.js';
import type { HandBack, StartCandidate } from './verification-protection.types.js';
import { errorText } from '../core/error-text.js';

export type { HandBack, StartCandidate, StartedSession } from './verification-protection.types.js';
export type { StartPermit, StartRollback } from './start-permit.js';

/**
 * The outcomes that end a session, and so settle its open spend reservation (a step verified after
 * another step of its journey is `verified_again`: charged all the same).
 */
const SESSION_ENDS = ['verified', 'verifiedAgain', 'failed', 'expired'] as const;

/** Slack of a start's coalescing claim beyond the API timeout: the hook and the store calls. */
const CLAIM_SLACK_MS = 10_000;

/**
 * Protection of the host's money and users on the client routes: start and check limits, resend
 * cooldown, duplicate-start coalescing, spend cap and the `beforeStart` hook (the country and
 * number-type allowlists run before, in PhoneNumberNormalizer). All state lives in the
 * VerificationStore so that limits hold across instances.
 *
 * A journey's switch to another method is a start like any other here (`admitSwitch`: no
 * coalescing, the journey's step claim keeps it single), its cooldown that of its own method.
 *
 * Order of a start (`admitStart`): coalescing (an identical pending start of the same owner or
 * browser is handed back, counted nowhere) → the pumping defence's reading → beforeStart (told what
 * the defence suspects) → wrong-code budgets (read only) → resend cooldown → per-client,
 * per-(phone, caller) and per-phone limits → the pumping defence's verdict → spend-cap reservation
 * → a StartPermit handed out → the upstream call (the caller's) → the permit settled. Whatever a start took is given back when it is refused further on, and when the API
 * answered that nothing was sent: a start that sent nothing costs nobody any budget.
 */
@Injectable()
export class VerificationProtection implements OnModuleInit, OnModuleDestroy {
  private readonly limits: RequestRateLimits;
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
  ) {
    const { logger, metrics } = telemetry;
    this.logger = logger;
    const limits = options.limits;
    warnWhenSpendUnbounded(limits, logger);
    this.limits = new RequestRateLimits(store, limits, options.dataKeys);
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
   * every limit (in the order above) and gets the permit it settles after the upstream call (see
   * StartPermit). Protection is asked once and never calls back.
   */
  async admitStart(candidate: StartCandidate, stale?: string): Promise<HandBack | StartPermit> {
    const starter = starterOf(candidate);
    if (!this.coalescer || starter === undefined) return this.admit(candidate, undefined);
    const claimed = await this.coalescer.claim(
      ProtectionKeys.coalesce(this.options.dataKeys, starter, candidate.phoneNumber, candidate.method),
      stale,
    );
    if (typeof claimed === 'string')
      return {
        handBack: claimed,
        resendAvailableAt: await this.cooldown.availableAt(
          candidate.phoneNumber,
          candidate.method,
          limitsCallerOf(candidate),
        ),
      };
    try {
      return await this.admit(candidate, claimed);
    } catch (error) {
      await claimed.failed(error);
      throw error;
    }
  }

  /** Admits a journey's switch: a start like any other, but never coalesced (the journey's step claim keeps it single). */
  admitSwitch(candidate: StartCandidate): Promise<StartPermit> {
    return this.admit(candidate, undefined);
  }

  private async admit(
    candidate: StartCandidate,
    coalescing: CoalescingClaim | undefined,
  ): Promise<StartPermit> {
    const pumping = await this.pumping.assess(candidate);
    const suspected = this.pumping.signal(pumping);
    const challengePassed = await runBeforeStart(
      this.options.limits.beforeStart,
      {
        phoneNumber: candidate.phoneNumber,
        method: candidate.method,
        ip: candidate.ip,
        owner: candidate.owner,
        request: candidate.request,
        ...(suspected ? { suspected } : {}),
        ...(candidate.switchedFrom ? { switchedFrom: candidate.switchedFrom } : {}),
      },
      this.logger,
    );
    await this.wrongCodes.assertStartAllowed(candidate.phoneNumber, candidate.owner);
    const caller = limitsCallerOf(candidate);
    const holds: ProtectionHold[] = [];
    let reservation: SpendReservation | undefined;
    let resendAvailableAt: Date | null;
    try {
      const claim = await this.cooldown.claim(candidate.phoneNumber, candidate.method, {
        caller,
        starter: starterOf(candidate),
      });
      resendAvailableAt = claim.availableAt;
      holds.push(claim.hold);
      const grade = this.gradeOf(candidate);
      holds.push(await this.countStart(candidate, caller, grade));
      holds.push(await this.pumping.admit(pumping, challengePassed, grade));
      reservation = await this.reserve(candidate, pumping, grade);
    } catch (error) {
      await releaseAll(holds);
      throw error;
    }
    return new StartPermit(
      {
        resendAvailableAt,
        claim: coalescing,
        holds,
        reservation,
        suspected: this.pumping.suspects(pumping),
        attribute: (session) => this.pumping.started(pumping, session.requestId, session.expiresAt),
      },
      this.logger,
    );
  }

  /**
   * The request limits. A shared address (carrier NAT, an office) is not a reason to refuse a
   * user: under grading, a start of a method charged on proof (which costs nothing unless the
   * number's owner proves it) is not counted against the per-address limit, and any other start
   * past it is graded (409 `method_held`) rather than refused while such a method is offered.
   */
  private async countStart(
    candidate: StartCandidate,
    caller: string,
    grade: GradedAnswer | undefined,
  ): Promise<ProtectionHold> {
    const clientKey = grade?.proofCharged ? undefined : candidate.clientKey;
    try {
      return await this.limits.countStart(clientKey, candidate.phoneNumber, caller);
    } catch (error) {
      if (
        error instanceof ProtectionRefusal &&
        error.reason === ProtectionRefusalReason.startIpLimit &&
        grade &&
        grade.offered.length > 0
      )
        throw protectionRefusal(ProtectionRefusalReason.methodHeld, (error.retryAfterSeconds ?? 1) * 1000, {
          offered_methods: [...grade.offered],
          held: ProtectionRefusalReason.startIpLimit,
        });
      throw error;
    }
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
   * charged on proof and callers with a record; a start the cap cannot afford is graded (409
   * `method_held`) rather than refused while a method charged on proof is offered.
   */
  private async reserve(
    candidate: StartCandidate,
    pumping: Awaited<ReturnType<PumpingDefence['assess']>>,
    grade: GradedAnswer | undefined,
  ): Promise<SpendReservation | undefined> {
    if (!this.spendCap) return undefined;
    const privileged = methodTraits(candidate.method).chargedOnProof || this.pumping.knownCaller(pumping);
    // Monitor mode reports and never acts: the whole cap is open to everyone.
    const enforced = this.options.limits.pumping.mode === 'enforce';
    const keep = enforced && !privileged ? this.options.limits.pumping.reserveShare : 0;
    try {
      return await this.spendCap.reserve(candidate.method, keep);
    } catch (error) {
      if (
        error instanceof ProtectionRefusal &&
        error.reason === ProtectionRefusalReason.spendCap &&
        grade &&
        !grade.proofCharged &&
        grade.offered.length > 0
      )
        throw protectionRefusal(ProtectionRefusalReason.methodHeld, (error.retryAfterSeconds ?? 1) * 1000, {
          offered_methods: [...grade.offered],
          held: ProtectionRefusalReason.spendCap,
        });
      throw error;
    }
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

  /**
   * A session ended: the spend cap gives its reservation back when the API does not charge it.
   * Never throws (as countVerified); a failure keeps the reservation (the safe side).
   */
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

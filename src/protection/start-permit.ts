import type { ProtectionLog } from '../observability/protection-log.js';
import { releaseAll, type ProtectionHold } from './protection-hold.js';
import type { SpendReservation } from './spend-cap.js';
import type { CoalescingClaim } from './start-coalescer.js';
import type { StartedSession } from './verification-protection.types.js';
import { errorText } from '../core/error-text.js';
import type { StartAssessmentFacts } from '../core/session-record.js';
import type { IndexReservation } from '../sessions/subject-index.js';

/** What an admitted start took from protection, for its permit to settle. */
export interface PermitTerms {
  /** When this caller's next start to this phone will be accepted (resend cooldown), or null. */
  resendAvailableAt: Date | null;
  /** The coalescing claim the start holds (none: not coalesced), settled with the permit. */
  claim: CoalescingClaim | undefined;
  /** The cooldown, the request limits' points and the pumping counts, in the order they were taken. */
  holds: ProtectionHold[];
  reservation: SpendReservation | undefined;
  /** The store probe issued with the admission's last writes, the session's index slots reserved (none: the payer probes itself). */
  reachable?: Promise<IndexReservation>;
  /** The pumping defence suspected the start but let it go (monitor mode, a passed challenge, an attack on its country). */
  suspected: boolean;
  /** The host's `assessStart` answer for the start, carried to its session's record (none: no hook). */
  assessment?: StartAssessmentFacts;
  /**
   * Remembers which pumping subjects a started session belongs to (so its verification counts there)
   * and, for a free start, the free points its proof gives back.
   */
  attribute(session: StartedSession): Promise<void>;
  /** The API answered 429: every instance waits `ms` before sending another start. */
  backOff?(ms: number): Promise<void>;
}

/** How a start that did not produce a session ended, as far as the caller knows. */
export interface StartRollback {
  /**
   * True when the API certainly did not start a session (it answered with a refusal, or refused the
   * connection): everything the start took is given back, or a few refused starts would lock a
   * number out without a single SMS. False when it may have (a time-out, a reset, an unreadable
   * answer, or a failure after the API answered): everything stays counted.
   */
  nothingSent: boolean;
  /** The error the start fails with: identical starts of this process that waited on it fail with it too. */
  failure?: unknown;
  /** The API answered 429 with this `Retry-After` (1 s without one). */
  upstreamRetryAfterMs?: number;
}

/**
 * Leave for one paid start, handed out by `VerificationProtection.admitStart` (or `admitSwitch`) once
 * the start has passed every check and taken its share of every limit. The caller calls the API and
 * then settles the permit once: `commit(session)` when the API started a session (the spend
 * reservation takes its real cost, the pumping defence learns which subjects the session belongs to,
 * the coalescing claim hands the session back to identical starts), `rollback(...)` when it did not
 * (see StartRollback). The first settlement counts; later ones do nothing.
 *
 * Settlements never throw: the session, or the refusal the caller is about to report, matters more
 * than a count that could not be corrected (a failed correction is logged and errs on the safe side).
 *
 * A permit that is never settled gives nothing back, as `rollback({ nothingSent: false })` does: a
 * start whose outcome nobody reported may have been paid for. Nothing leaks past its window all the
 * same: the cooldown, the limits' counters and the spend window each end on their own TTL, and the
 * reservation keeps its estimate instead of the real cost. Callers settle in `finally` even so.
 */
export class StartPermit {
  private settled = false;
  /** When this caller's next start to this phone will be accepted (resend cooldown), or null. */
  readonly resendAvailableAt: Date | null;
  /** The pumping defence suspected this start (the method figures leave it out). */
  readonly suspected: boolean;
  /** The host's `assessStart` answer for this start, for its session's record. */
  readonly assessment: StartAssessmentFacts | undefined;
  /** The store probe issued with the admission's last writes, if any: settles once the store answered. */
  readonly reachable: Promise<IndexReservation> | undefined;

  constructor(
    private readonly admission: PermitTerms,
    private readonly logger: ProtectionLog,
  ) {
    this.resendAvailableAt = admission.resendAvailableAt;
    this.suspected = admission.suspected;
    this.assessment = admission.assessment;
    this.reachable = admission.reachable;
  }

  /** Whether the permit was committed or rolled back. */
  get isSettled(): boolean {
    return this.settled;
  }

  /**
   * Just before the API call: the coalescing claim, if any, renewed for the call's whole life (CoalescingClaim.renew).
   * Throws 503 `start_in_progress` when another start took it meanwhile: nothing was sent, and everything this
   * start took is given back.
   */
  async renewClaim(): Promise<void> {
    try {
      await this.admission.claim?.renew();
    } catch (error) {
      await this.rollback({ nothingSent: true, failure: error });
      throw error;
    }
  }

  /** The API started `session`: its real cost replaces the reservation's estimate; it is attributed for the pumping defence. */
  async commit(session: StartedSession): Promise<void> {
    if (!this.settle()) return;
    // Independent writes, issued together (one round trip).
    await Promise.all([
      this.admission.attribute(session).catch((error: unknown) => {
        // Its verification will be counted for its range, country and owner only, and gives no free point back.
        this.logger.warn('pumping defence: the start could not be attributed', { error: errorText(error) });
      }),
      this.admission.reservation?.settle(session.cost, session).catch((error: unknown) => {
        // The session exists and is paid for: serve it; the window keeps the estimate.
        this.logger.warn('spend cap: the real cost could not be recorded', { error: errorText(error) });
      }),
      this.admission.claim?.started(session, this.admission.resendAvailableAt),
    ]);
  }

  /** The start produced no session: gives everything back when nothing was sent, keeps it counted otherwise. */
  async rollback(outcome: StartRollback): Promise<void> {
    if (!this.settle()) return;
    if (outcome.nothingSent) await releaseAll([...this.admission.holds, this.admission.reservation]);
    if (outcome.upstreamRetryAfterMs !== undefined)
      await this.admission.backOff?.(outcome.upstreamRetryAfterMs).catch((error: unknown) => {
        this.logger.warn('the API rate limit could not be shared', { error: errorText(error) });
      });
    await this.admission.claim?.failed(outcome.failure);
  }

  private settle(): boolean {
    if (this.settled) return false;
    this.settled = true;
    return true;
  }
}

import { Inject, Injectable, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { errorText } from '../core/error-text.js';
import { isEventOf, VerificationEventName, type VerificationEvent } from '../core/verification-events.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { PumpingDefence } from '../pumping/pumping-defence.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { RequestRateLimits } from './request-rate-limits.js';
import { SpendCap } from './spend-cap.js';

/** The outcomes that end a session and settle its open spend reservation (`verified_again` is charged too). */
const SESSION_ENDS = ['verified', 'verifiedAgain', 'failed', 'expired'] as const;

/**
 * What protection learns from the tracker's events (each emitted once per deployment): a completed
 * verification is counted by the pumping defence and gives its start's free points back, and a
 * session's end settles its spend reservation.
 * It listens only for a part that is on. Its listeners never throw: a failing count must not make
 * the tracker deliver the event again.
 */
@Injectable()
export class ProtectionEvents implements OnModuleInit, OnModuleDestroy {
  private readonly onVerified = (event: VerificationEvent): Promise<void> => this.countVerified(event);
  private readonly onEnded = (event: VerificationEvent): Promise<void> => this.sessionEnded(event);

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly telemetry: VerificationTelemetry,
    private readonly pumping: PumpingDefence,
    private readonly limits: RequestRateLimits,
    /** Off (`limits.spendCap: false`): undefined. */
    @Optional() @Inject(SpendCap) private readonly spendCap?: SpendCap,
    @Optional() @Inject(EventEmitter2) private readonly emitter?: EventEmitter2,
    @Optional() @Inject(SessionRecordRepository) private readonly records?: SessionRecordRepository,
  ) {}

  onModuleInit(): void {
    const { enabled, freeStartPerCaller } = this.options.limits;
    if (this.pumping.enabled || (enabled && freeStartPerCaller !== false))
      this.emitter?.on(VerificationEventName.verified, this.onVerified);
    if (this.spendCap)
      for (const name of SESSION_ENDS) this.emitter?.on(VerificationEventName[name], this.onEnded);
  }

  onModuleDestroy(): void {
    this.emitter?.off(VerificationEventName.verified, this.onVerified);
    for (const name of SESSION_ENDS) this.emitter?.off(VerificationEventName[name], this.onEnded);
  }

  /** A session ended: the spend cap settles its reservation (SpendCap.ended). A failure keeps it. */
  private async sessionEnded(event: VerificationEvent): Promise<void> {
    // Another registration's session is its own cap's to settle: read here, its record is not found and
    // it would be settled as delivered (charged) first, on a cap two registrations share.
    if (!isEventOf(event, this.options.name)) return;
    try {
      const verified = event.status === 'verified';
      // Without the record, nothing says it went undelivered: it is kept (charged).
      const record = verified ? null : await this.records?.get(event.requestId);
      const delivered = verified || (record ? record.delivered === true : true);
      await this.spendCap?.ended(event.requestId, { verified, delivered });
    } catch (error) {
      this.telemetry.logger.warn('spend cap: an ended session could not be settled', {
        error: errorText(error),
      });
    }
  }

  private async countVerified(event: VerificationEvent): Promise<void> {
    // A test number's verification converts nothing: protection never counted its start either. Another
    // registration's event is its own protection's to count.
    if (event.test || !isEventOf(event, this.options.name)) return;
    await Promise.all([
      // Off, the defence counts nothing (its own rule).
      this.pumping.verified(event).catch((error: unknown) => {
        this.telemetry.logger.warn('pumping defence: a verification could not be counted', {
          error: errorText(error),
        });
      }),
      this.limits.freeStartProved(event.requestId).catch((error: unknown) => {
        // The points stay counted until their window ends: the safe side.
        this.telemetry.logger.warn('free starts: a proved start could not give its points back', {
          error: errorText(error),
        });
      }),
    ]);
  }
}

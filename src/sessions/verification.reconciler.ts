import { isTestSession } from '../core/test-session.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import type { TraceSpan } from '../observability/verification-tracing.js';
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { VerificationApiError } from '../api/verification-api.error.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { SessionRecordRepository } from './session-record.repository.js';
import { isTerminal } from '../core/verification-status.js';
import type { JourneyRecord } from '../core/journey.js';
import type { SessionRecord } from '../core/session-record.js';
import { SessionRefresher } from './session-refresher.js';
import { describeUpstreamError } from '../api/verification-api.error.js';
import { VerificationListenerError, VerificationTracker } from './verification.tracker.js';
import { errorText } from '../core/error-text.js';

/** Sessions claimed from the queue per store round trip (and polled concurrently). */
const BATCH_SIZE = 50;

/**
 * The polling safety net. Every session started through the module sits in the store's
 * reconcile queue until it is terminal with every event emitted, or past `expires_at` + grace.
 * Each due session is claimed with a lease (one instance per session per interval across the
 * deployment) and read through SessionRefresher, so status polls and the reconciler share one
 * coalescing claim: upstream sees at most one GET per session per interval from both together.
 * A terminal session whose listener failed stays queued and its events are emitted again.
 *
 * The sessions of a canceled journey leave the queue at their next look, without a poll, when
 * webhooks report outcomes (cancel takes them out too; this covers a look that was under way
 * meanwhile); without webhooks they are followed to their end at the lazy pace, since a poll is then
 * the only way a late outcome reaches the host.
 *
 * Runs on a real-time tick (`reconcile.tickMs`) from application bootstrap to shutdown; tests
 * move the store's clock and call `runOnce()` instead of waiting.
 */
@Injectable()
export class VerificationReconciler implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private current: Promise<number> = Promise.resolve(0);
  private stopped = true;

  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly records: SessionRecordRepository,
    private readonly refresher: SessionRefresher,
    private readonly tracker: VerificationTracker,
    private readonly telemetry: VerificationTelemetry,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.options.reconcile.enabled) return;
    this.stopped = false;
    this.arm();
  }

  /** Stops the tick and waits for a pass in progress, so nothing touches the store after shutdown. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
  }

  /**
   * Polls every session due now (store clock) and returns how many were looked at. Passes in one
   * process run one after another; a call made during a pass waits for it, then runs its own.
   */
  runOnce(): Promise<number> {
    const pass = this.current.then(() => this.drain());
    this.current = pass.catch(() => 0);
    return pass;
  }

  /** Sessions waiting in the queue (due or not). */
  pending(): Promise<number> {
    return this.records.queue.size();
  }

  private arm(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.runOnce()
        .catch((error: unknown) => this.telemetry.logger.warn(`reconcile pass failed: ${errorText(error)}`))
        .finally(() => this.arm());
    }, this.options.reconcile.tickMs);
    // Never keeps a process alive on its own; shutdown clears it anyway.
    this.timer.unref();
  }

  private async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const batch = await this.records.queue.claimDue(BATCH_SIZE);
      await Promise.all(batch.map((requestId) => this.reconcile(requestId)));
      total += batch.length;
      if (batch.length < BATCH_SIZE || this.stopped) return total;
    }
  }

  /** One look at one claimed session, in a `verification.reconcile` span. Failures leave it leased, so it comes back later. */
  private reconcile(requestId: string): Promise<void> {
    return this.telemetry.span('reconcile', (span) => this.reconcileSession(requestId, span));
  }

  private async reconcileSession(requestId: string, span: TraceSpan): Promise<void> {
    // A journey's first session names it: both are read at once (the usual session has no journey record).
    const [record, ownJourney] = await Promise.all([
      this.records.get(requestId),
      this.records.getJourney(requestId),
    ]);
    if (!record) {
      await this.records.queue.release(requestId);
      return;
    }
    span.set({ method: record.method, outcome: record.status, test: isTestSession(record.requestId) });
    try {
      if (!isTerminal(record.status) && (await this.canceled(record, ownJourney))) {
        await this.followCanceled(record);
        return;
      }
      if (isTerminal(record.status)) {
        // The truth is final; only events whose listeners failed before are still due.
        await this.tracker.emitDue(record, 'poll');
        return;
      }
      const fresh = await this.refresher.refresh(record, 'poll');
      if (isTerminal(fresh.status)) return; // the tracker released it (or queued a retry)
      const next = this.records.queue.nextPollAt(fresh, this.options.clock());
      if (next === null) {
        this.telemetry.logger.warn(
          `gave up on a ${fresh.method} session still ${fresh.status} ${this.options.reconcile.graceMs} ms after expiry`,
        );
        await this.records.queue.release(requestId);
      } else {
        await this.records.queue.scheduleAt(requestId, next);
        // Another instance may have settled the session and released its entry between this pass's read
        // and its schedule: the entry is put right now, as the next pass would (released once settled).
        const settled = await this.records.get(requestId);
        if (settled && isTerminal(settled.status)) await this.tracker.emitDue(settled, 'poll');
      }
    } catch (error) {
      if (error instanceof VerificationListenerError) return; // the tracker queued the retry
      if (error instanceof VerificationApiError && error.status === 404) {
        this.telemetry.logger.warn(
          'the API no longer knows a session the module started; it is no longer polled',
        );
        await this.records.queue.release(requestId);
        return;
      }
      if (
        !isTerminal(record.status) &&
        this.records.queue.nextPollAt(record, this.options.clock()) === null
      ) {
        this.telemetry.logger.warn(
          `gave up on a ${record.method} session after expiry: ${describeUpstreamError(error)}`,
        );
        await this.records.queue.release(requestId).catch(() => undefined);
        return;
      }
      this.telemetry.logger.warn(
        `reconcile of a session failed, retried later: ${describeUpstreamError(error)}`,
      );
      await this.records.queue.retryLater(record).catch(() => undefined);
    }
  }

  /**
   * A session of a canceled journey: with webhooks, nothing more is polled (a late outcome arrives by
   * webhook). Without them, a poll is the only way an outcome the API still reaches (and charges) gets
   * to the host, so it is followed to its end at the lazy pace.
   */
  private async followCanceled(record: SessionRecord): Promise<void> {
    if (this.records.queue.nextCanceledPollAt(record, this.options.clock()) === null) {
      await this.records.queue.release(record.requestId);
      return;
    }
    const fresh = await this.refresher.refresh(record, 'poll');
    if (isTerminal(fresh.status)) return; // the tracker released it (or queued a retry)
    const next = this.records.queue.nextCanceledPollAt(fresh, this.options.clock());
    if (next === null) await this.records.queue.release(record.requestId);
    else await this.records.queue.scheduleAt(record.requestId, next);
  }

  /** Whether the session's journey was canceled (`ownJourney`: the journey its request id names, if any). */
  private async canceled(record: SessionRecord, ownJourney: JourneyRecord | null): Promise<boolean> {
    const journey =
      record.journeyId === undefined ? ownJourney : await this.records.getJourney(record.journeyId);
    return journey?.canceledAt !== undefined;
  }
}

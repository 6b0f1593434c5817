import { Inject, Injectable } from '@nestjs/common';
import { answeringSession } from '../core/journey.js';
import { isTestSession } from '../core/test-session.js';
import { isTerminal } from '../core/verification-status.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationProtection } from '../protection/verification-protection.service.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { ReconcileQueue } from '../sessions/reconcile-queue.js';
import { SessionRefresher } from '../sessions/session-refresher.js';
import { notPending, switchInProgress } from './client-refusals.js';
import { FlowOutcomes } from './flow-outcomes.js';
import { JourneyHandles } from './journey-handles.js';
import { JourneyState, type LoadedJourney } from './journey-state.js';
import type { CancelInput, CancelView } from './verification.views.js';

/**
 * `POST /cancel`, top to bottom: open the journey, count the call against the caller's check limit,
 * look once more at its pending steps (an outcome of the last second is emitted and refuses the
 * cancel), claim its next step, mark it canceled, let go of its sessions, answer. Idempotent; a
 * verified journey is not canceled (409 `not_pending`). A late outcome still reaches listeners: by
 * webhook, or without webhooks through the reconciler, which follows the pending sessions to their
 * end at the lazy pace.
 */
@Injectable()
export class CancelFlow {
  private readonly handles: JourneyHandles;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly protection: VerificationProtection,
    private readonly journeyState: JourneyState,
    private readonly records: SessionRecordRepository,
    private readonly refresher: SessionRefresher,
    private readonly reconcileQueue: ReconcileQueue,
    private readonly outcomes: FlowOutcomes,
  ) {
    this.handles = new JourneyHandles(options, journeyState);
  }

  async cancel(input: CancelInput): Promise<CancelView> {
    return this.outcomes.span('cancel', async (span) => {
      try {
        const journeyId = await this.handles.openCarrying(
          input.verificationId,
          input.owner,
          input.journeyToken,
        );
        // A cancel writes to the store for its caller: it counts as a check does against the caller's limit
        // (not a test number's: protection counts nothing of those).
        if (!isTestSession(journeyId))
          await this.protection.assertCheckAllowed(this.protection.clientKey(input.request, input.ip));
        const canceled: CancelView = { verificationId: input.verificationId, status: 'canceled' };
        const seen = await this.journeyState.load(journeyId, input.owner);
        if (seen.journey.canceledAt !== undefined) {
          span.set({ outcome: 'canceled' });
          return canceled;
        }
        // Once more, fresh from the API, before letting go: the user may have just finished a step.
        const loaded = await this.lookOnceMore(seen);
        const { status } = answeringSession(loaded.journey, loaded.records, loaded.current);
        if (status === 'verified') throw notPending('verified');
        const claim = await this.records.claimStep(journeyId, loaded.journey.steps.length);
        if (!claim) throw switchInProgress();
        try {
          const latest = (await this.records.getJourney(journeyId)) ?? loaded.journey;
          await this.records.saveJourney({ ...latest, canceledAt: this.options.clock() }, loaded.current.expiresAt);
        } finally {
          await this.records.releaseStep(claim).catch(() => undefined);
        }
        // With webhooks, nothing more is polled (a late outcome arrives by webhook); without them the
        // reconciler follows the pending sessions to their end (see VerificationReconciler).
        if (this.options.webhooks.enabled)
          for (const record of loaded.records)
            if (record && !isTerminal(record.status)) await this.reconcileQueue.release(record.requestId);
        await this.records.announce(journeyId);
        this.outcomes.telemetry.canceled(loaded.current, loaded.journey.steps.length);
        span.set({ outcome: 'canceled' });
        return canceled;
      } catch (error) {
        throw this.outcomes.failed('cancel', error);
      }
    });
  }

  /**
   * The journey with each pending step's record read fresh from the API (not through the poll
   * coalescing: an outcome of the last second decides whether a cancel may go through). A step that
   * could not be read keeps its record and stays in the reconciler's queue.
   */
  private async lookOnceMore(loaded: LoadedJourney): Promise<LoadedJourney> {
    const records = await Promise.all(
      loaded.records.map(async (record) => {
        if (!record || isTerminal(record.status)) return record;
        try {
          return await this.refresher.readNow(record);
        } catch (error) {
          this.outcomes.telemetry.statusServedStale(record, error);
          return record;
        }
      }),
    );
    const current = records[records.length - 1] ?? loaded.current;
    return { ...loaded, records, current };
  }
}

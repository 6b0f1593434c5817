import { Inject, Injectable } from '@nestjs/common';
import type { VerificationSession } from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import type { SessionRecord } from '../core/session-record.js';
import { VerificationEventName } from '../core/verification-events.js';
import { methodTraits } from '../core/verification-method.js';
import { announcedStatus, isTerminal } from '../core/verification-status.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { VerificationTracker } from '../sessions/verification.tracker.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { InDoubtStarts } from '../verification/in-doubt-starts.js';
import { observationFromNotice, type WebhookNotice } from './webhook-notice.js';

/**
 * What became of a webhook (the 200 answer's `result`):
 * - `processed`: the session was confirmed and every due event emitted;
 * - `duplicate`: this webhook-id was (or is being) handled already;
 * - `ignored`: not a session this deployment started (or one the API no longer knows);
 * - `deferred`: the webhook announces an outcome the API does not show yet; the reconciler
 *   looks again at the spec's pace and emits once the API agrees.
 */
export type WebhookResult = 'processed' | 'duplicate' | 'ignored' | 'deferred';

/**
 * The second half of the webhook route, WebhookReceiver's: after the receiver has
 * authenticated and de-duplicated the delivery, what its `(request_id, event)` means for the session.
 * The record is found (or an in-doubt start adopted), the session confirmed with `GET /v1/verify/{id}`
 * (`confirmWithApi`) and handed to the tracker, which emits what the API says.
 */
@Injectable()
export class WebhookNotices {
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly records: SessionRecordRepository,
    private readonly inDoubt: InDoubtStarts,
    private readonly api: VerificationApiClient,
    private readonly tracker: VerificationTracker,
    private readonly telemetry: VerificationTelemetry,
  ) {}

  /** What the signed, first-delivered notice means for its session; rejects when it could not be processed. */
  async handle(notice: WebhookNotice): Promise<WebhookResult> {
    let record = await this.records.get(notice.requestId);
    let session: VerificationSession | null | undefined;
    if (!record) {
      // Only sessions this deployment started have an owner and a listener waiting: one whose
      // initiation timed out is adopted here; others (another integration on the same account, or
      // long forgotten) are acknowledged so the sender stops.
      const adopted = await this.inDoubt.adopt(notice.requestId);
      if (!adopted) return 'ignored';
      ({ record, session } = adopted);
    }
    if (isTerminal(record.status)) {
      // The outcome is final and known: at most an event whose listener failed is still due.
      const { emitted } = await this.tracker.emitDue(record, 'webhook');
      return emitted.length > 0 ? 'processed' : 'duplicate';
    }
    if (
      notice.event === VerificationEventName.codeRequired &&
      methodTraits(record.method).codeRequestAnnounced &&
      record.fallback !== true
    ) {
      // The event name is signed, so the SMS fallback happened: kept before asking the API, which may
      // no longer show `awaiting_code` (the code was accepted since) or may be down right now. The
      // event is then due before the outcome, whichever observation comes next.
      record = { ...record, fallback: true };
      await this.records.save(record);
    }
    // An adopted session was asked of the API just now.
    session ??= await this.confirmedSession(notice, record);
    if (session === null) return 'ignored';
    const observed = await this.tracker.observe(session, 'webhook', record);
    if (announcedStatus(notice.event) !== undefined && !isTerminal(observed.status)) {
      // Without the reconciler nobody would look again: the sender's retry is the way back.
      if (!this.options.reconcile.enabled)
        throw new VerificationClientError(
          'service_unavailable',
          'The API does not show this outcome yet; retry later',
          {},
          5,
        );
      await this.records.queue.pollSoon(observed);
      return 'deferred';
    }
    return 'processed';
  }

  /** The session as the API shows it (`confirmWithApi`), or as the signed notice announces it; null when the API does not know it. */
  private async confirmedSession(
    notice: WebhookNotice,
    record: SessionRecord,
  ): Promise<VerificationSession | null> {
    if (!this.options.webhooks.confirmWithApi) return observationFromNotice(notice, record, this.store.now());
    try {
      return await this.api.getSession(notice.requestId);
    } catch (error) {
      if (error instanceof VerificationApiError && error.status === 404) {
        this.telemetry.logger.warn(
          'a webhook named a session the API does not know; acknowledged, nothing emitted',
        );
        return null;
      }
      throw error;
    }
  }
}

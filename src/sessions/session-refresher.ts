import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { Inject, Injectable } from '@nestjs/common';
import { VerificationApiClient } from '../api/verification-api.client.js';
import type { VerificationEventSource } from '../core/verification-events.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { SessionRecordRepository } from './session-record.repository.js';
import type { SessionRecord } from '../core/session-record.js';
import { pollIntervalMs } from '../core/verification-method.js';
import { isTerminal } from '../core/verification-status.js';
import { VerificationTracker } from './verification.tracker.js';

/**
 * Reads a session's truth (`GET /v1/verify/{id}`) for status polls and the reconciler and hands
 * it to the tracker. With coalescing on, upstream sees at most one GET per session per poll
 * interval across every instance (a claim in the store), and concurrent callers in one process
 * share one request; callers that lose the claim get the stored record, at most one interval old.
 */
@Injectable()
export class SessionRefresher {
  private readonly inflight = new Map<string, Promise<SessionRecord>>();
  /**
   * Poll claims this process took: request id → end of the claim on the store clock, oldest
   * first. A poll inside one would lose the claim anyway, so it skips the store round trip.
   */
  private readonly ownClaims = new Map<string, number>();

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly api: VerificationApiClient,
    private readonly records: SessionRecordRepository,
    private readonly tracker: VerificationTracker,
    private readonly telemetry: VerificationTelemetry,
  ) {}

  static pollClaimKey(requestId: string): string {
    return `poll:{${requestId}}`;
  }

  /** The freshest record allowed by the coalescing rules. Terminal records are returned as stored. */
  async refresh(record: SessionRecord, source: VerificationEventSource = 'poll'): Promise<SessionRecord> {
    if (isTerminal(record.status)) return record;
    // Coalescing off: every poll asks the API itself.
    if (!this.options.statusCache.enabled) return this.fetch(record, source);
    const running = this.inflight.get(record.requestId);
    if (running) return running;
    const now = this.store.now();
    // The caller read `record` just now, with no wait since: it is what a re-read after a lost claim gives.
    if ((this.ownClaims.get(record.requestId) ?? 0) > now) return record;
    const intervalMs = pollIntervalMs(record.method);
    const claimed = await this.store.setIfAbsent(
      SessionRefresher.pollClaimKey(record.requestId),
      '1',
      intervalMs,
    );
    if (!claimed) return (await this.records.get(record.requestId)) ?? record;
    this.rememberClaim(record.requestId, now + intervalMs, now);
    const promise = this.fetch(record, source).finally(() => this.inflight.delete(record.requestId));
    this.inflight.set(record.requestId, promise);
    return promise;
  }

  /**
   * The session read from the API now, past the poll coalescing (an outcome of the last second
   * decides a cancel or a wrong code's answer), and observed without failing on a listener.
   */
  async readNow(record: SessionRecord): Promise<SessionRecord> {
    return this.tracker.observeQuietly(await this.api.getSession(record.requestId), 'poll', record);
  }

  private rememberClaim(requestId: string, until: number, now: number): void {
    this.ownClaims.delete(requestId);
    this.ownClaims.set(requestId, until);
    // Claims end in about the order they were taken: drop the ended ones at the front (bounded by the poll rate).
    for (const [id, end] of this.ownClaims) {
      if (end > now) break;
      this.ownClaims.delete(id);
    }
  }

  private async fetch(record: SessionRecord, source: VerificationEventSource): Promise<SessionRecord> {
    return this.telemetry.span(
      'status_refresh',
      async (span) => {
        const session = await this.api.getSession(record.requestId);
        const observed = await this.tracker.observe(session, source, record);
        span.set({ outcome: observed.status });
        return observed;
      },
      { method: record.method },
    );
  }
}

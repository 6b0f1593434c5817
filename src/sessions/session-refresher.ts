import { Inject, Injectable } from '@nestjs/common';
import type { VerificationSession } from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import { MAX_SESSION_TTL_MS, newSessionRecord, type SessionRecord } from '../core/session-record.js';
import type { VerificationEventSource } from '../core/verification-events.js';
import { pollIntervalMs } from '../core/verification-method.js';
import { isTestSession } from '../core/test-session.js';
import { isTerminal } from '../core/verification-status.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from './session-record.repository.js';
import { VerificationListenerError, VerificationTracker } from './verification.tracker.js';

/**
 * How long a handle whose session the API does not know is remembered as unknown, so that a page
 * polling it does not cost one upstream GET per poll.
 */
export const UNKNOWN_SESSION_TTL_MS = 60_000;

/**
 * How long a session past its record's retention is remembered as gone: it never comes back, so a
 * day-old handle polled by a page (or by a client with many old handles) costs the API one GET a day,
 * not one per request.
 */
export const GONE_SESSION_TTL_MS = RECORD_RETENTION_MS;

/**
 * Reads a session's truth (`GET /v1/verify/{id}`) for status polls, the routes and the reconciler and
 * hands it to the tracker. With coalescing on, upstream sees at most one GET per session per poll
 * interval across every instance (a claim in the store), and concurrent callers in one process
 * share one request; callers that lose the claim get the stored record, at most one interval old.
 *
 * It also rebuilds the record of a session the store lost (a single instance restarted on a
 * MemoryStore, or an evicted Redis key) from a handle that opened (`recover`). Only a valid handle
 * reaches there: it was sealed by this deployment's key for this owner, so a stranger cannot make the
 * module ask the API about arbitrary ids, and the owner the handle binds becomes the record's owner.
 * The rebuilt record enters the reconciler's queue and goes through the tracker, whose claims emit
 * each outcome once. A session past its record's retention is left unknown: its record was dropped
 * as usual, not lost, and its events (if any) went out back then.
 */
@Injectable()
export class SessionRefresher {
  private readonly inflight = new Map<string, Promise<SessionRecord>>();
  /** Rebuilds under way in this process, by request id: concurrent polls share one upstream GET. */
  private readonly rebuilding = new Map<string, Promise<SessionRecord | null>>();
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

  static unknownKey(requestId: string): string {
    return `unknown:{${requestId}}`;
  }

  /**
   * The freshest record allowed by the coalescing rules. Terminal records are returned as stored.
   * `mayRead` (a meter) is asked only for a read of this call's own, never for a shared one: refused,
   * the record is answered as stored and the interval left for the next caller.
   */
  async refresh(
    record: SessionRecord,
    source: VerificationEventSource = 'poll',
    mayRead?: () => Promise<boolean>,
  ): Promise<SessionRecord> {
    if (isTerminal(record.status)) return record;
    // Coalescing off: every poll asks the API itself.
    if (!this.options.statusCache.enabled)
      return mayRead !== undefined && !(await mayRead()) ? record : this.fetch(record, source);
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
    if (mayRead !== undefined && !(await mayRead())) {
      await this.store.delete(SessionRefresher.pollClaimKey(record.requestId));
      return record;
    }
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
        span.set({ outcome: observed.status, test: isTestSession(record.requestId) });
        return observed;
      },
      { method: record.method },
    );
  }

  /** Whether the API was found not to know the session (or it is gone): a rebuild answers null from the store. */
  async knownUnknown(requestId: string): Promise<boolean> {
    return (await this.store.get(SessionRefresher.unknownKey(requestId))) !== null;
  }

  /**
   * The rebuilt record, freshly observed, or null when the API does not know the session (or it is
   * past retention). Rejects with the API's error when it could not be asked (the caller maps it).
   */
  recover(requestId: string, owner: string | undefined, journeyId?: string): Promise<SessionRecord | null> {
    const running = this.rebuilding.get(requestId);
    if (running) return running;
    const promise = this.rebuild(requestId, owner, journeyId).finally(() =>
      this.rebuilding.delete(requestId),
    );
    this.rebuilding.set(requestId, promise);
    return promise;
  }

  private async rebuild(
    requestId: string,
    owner: string | undefined,
    journeyId: string | undefined,
  ): Promise<SessionRecord | null> {
    if (await this.knownUnknown(requestId)) return null;
    let session: VerificationSession;
    try {
      session = await this.api.getSession(requestId);
    } catch (error) {
      if (!(error instanceof VerificationApiError && error.status === 404)) throw error;
      await this.store.set(SessionRefresher.unknownKey(requestId), '1', UNKNOWN_SESSION_TTL_MS);
      return null;
    }
    const now = this.store.now();
    // As it was at start, as far as the session resource tells (display data of start, such as
    // `code_length`, `number_to_call` or `deep_link`, is not in it and stays unknown); the longest TTL
    // when the API does not say when it ends.
    const seed = newSessionRecord(session, {
      owner,
      createdAt: now,
      ttlMs: MAX_SESSION_TTL_MS,
      as: 'seed',
      rebuilt: true,
      // A later step of a journey (from a journey token) belongs to it, as when it was started.
      ...(journeyId === undefined || journeyId === requestId ? {} : { journeyId }),
    });
    if (seed.expiresAt + RECORD_RETENTION_MS <= now) {
      await this.store.set(SessionRefresher.unknownKey(requestId), 'gone', GONE_SESSION_TTL_MS);
      return null;
    }
    // Another instance (or a webhook adoption) may have stored it meanwhile: theirs stands.
    if (!(await this.records.saveIfAbsent(seed))) return this.records.get(requestId);
    this.telemetry.logger.log('session record rebuilt from its handle and the API (the store had lost it)', {
      request_id: requestId,
      method: session.method,
    });
    await this.records.follow(seed);
    try {
      const observed = await this.tracker.observe(session, 'poll', seed);
      // Never seen turning verified here: without the API's time, its time is unknown (not the rebuild's).
      if (session.status !== 'verified' || session.verifiedAt || observed.verifiedAt === null)
        return observed;
      const unknown = { ...observed, verifiedAt: null };
      await this.records.save(unknown);
      return unknown;
    } catch (error) {
      // A failing listener: the tracker released the claim and queued a retry; the record stands.
      if (error instanceof VerificationListenerError) return (await this.records.get(requestId)) ?? seed;
      throw error;
    }
  }
}

import { Inject, Injectable } from '@nestjs/common';
import type { VerificationSession } from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { ReconcileQueue } from '../sessions/reconcile-queue.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from '../sessions/session-record.repository.js';
import { MAX_SESSION_TTL_MS, newSessionRecord, type SessionRecord } from '../core/session-record.js';
import { upstreamClientError } from './upstream-error.mapper.js';
import { VerificationListenerError, VerificationTracker } from '../sessions/verification.tracker.js';

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
 * Rebuilds the record of a session the store lost (a single instance restarted on a MemoryStore,
 * or an evicted Redis key) from a handle that opened and `GET /v1/verify/{id}`. Only a valid
 * handle reaches here: it was sealed by this deployment's key for this owner, so a stranger cannot
 * make the module ask the API about arbitrary ids, and the owner the handle binds becomes the
 * record's owner. The rebuilt record enters the reconciler's queue and goes through the tracker,
 * whose claims emit each outcome once. A session past its record's retention is left unknown: its
 * record was dropped as usual, not lost, and its events (if any) went out back then.
 */
@Injectable()
export class SessionRecordRecovery {
  /** Rebuilds under way in this process, by request id: concurrent polls share one upstream GET. */
  private readonly inflight = new Map<string, Promise<SessionRecord | null>>();

  constructor(
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly records: SessionRecordRepository,
    private readonly api: VerificationApiClient,
    private readonly tracker: VerificationTracker,
    private readonly queue: ReconcileQueue,
    private readonly logger: VerificationLogger,
    private readonly balance: VerificationBalanceWatch,
  ) {}

  static unknownKey(requestId: string): string {
    return `unknown:{${requestId}}`;
  }

  /**
   * For the client routes: the rebuilt record, or 404 `not_found` when the API does not know the
   * session; an upstream failure is logged for the operator and answered as the routes answer it (503).
   */
  async require(requestId: string, owner: string | undefined): Promise<SessionRecord> {
    let record: SessionRecord | null;
    try {
      record = await this.recover(requestId, owner);
    } catch (error) {
      throw await upstreamClientError(error, this.balance);
    }
    if (!record) throw new VerificationClientError('not_found');
    return record;
  }

  /**
   * The rebuilt record, freshly observed, or null when the API does not know the session (or it is
   * past retention). Rejects with the API's error when it could not be asked (the caller maps it).
   */
  recover(requestId: string, owner: string | undefined, journeyId?: string): Promise<SessionRecord | null> {
    const running = this.inflight.get(requestId);
    if (running) return running;
    const promise = this.rebuild(requestId, owner, journeyId).finally(() => this.inflight.delete(requestId));
    this.inflight.set(requestId, promise);
    return promise;
  }

  private async rebuild(
    requestId: string,
    owner: string | undefined,
    journeyId: string | undefined,
  ): Promise<SessionRecord | null> {
    if ((await this.store.get(SessionRecordRecovery.unknownKey(requestId))) !== null) return null;
    let session: VerificationSession;
    try {
      session = await this.api.getSession(requestId);
    } catch (error) {
      if (!(error instanceof VerificationApiError && error.status === 404)) throw error;
      await this.store.set(SessionRecordRecovery.unknownKey(requestId), '1', UNKNOWN_SESSION_TTL_MS);
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
      // A later step of a journey (from a journey token) belongs to it, as when it was started.
      ...(journeyId === undefined || journeyId === requestId ? {} : { journeyId }),
    });
    if (seed.expiresAt + RECORD_RETENTION_MS <= now) {
      await this.store.set(SessionRecordRecovery.unknownKey(requestId), 'gone', GONE_SESSION_TTL_MS);
      return null;
    }
    // Another instance (or a webhook adoption) may have stored it meanwhile: theirs stands.
    if (!(await this.records.saveIfAbsent(seed))) return this.records.get(requestId);
    this.logger.log('session record rebuilt from its handle and the API (the store had lost it)', {
      request_id: requestId,
      method: session.method,
    });
    await this.queue.track(seed);
    try {
      return await this.tracker.observe(session, 'poll', seed);
    } catch (error) {
      // A failing listener: the tracker released the claim and queued a retry; the record stands.
      if (error instanceof VerificationListenerError) return (await this.records.get(requestId)) ?? seed;
      throw error;
    }
  }
}

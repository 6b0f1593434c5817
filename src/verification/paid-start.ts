import { Inject, Injectable } from '@nestjs/common';
import { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import type { InitiateResult } from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { mayHaveBeenProcessed, VerificationApiError } from '../api/verification-api.error.js';
import { DEFAULT_SESSION_TTL_MS, newSessionRecord, type SessionRecord } from '../core/session-record.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import {
  VerificationProtection,
  type ProtectedStart,
  type StartAttempt,
  type StartPermit,
} from '../protection/verification-protection.service.js';
import { InDoubtStarts } from '../sessions/in-doubt-starts.js';
import { ReconcileQueue } from '../sessions/reconcile-queue.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { upstreamClientError } from './upstream-error.mapper.js';
import { TestNumberSessions } from '../test-numbers/test-number-sessions.js';

/**
 * One paid start, a journey's first session or a switch's: protection admits it (or throws its
 * refusal), the API is asked, the session is recorded and followed, and the permit is settled with
 * what happened (see StartPermit).
 */
@Injectable()
export class PaidStart {
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly api: VerificationApiClient,
    private readonly records: SessionRecordRepository,
    private readonly protection: VerificationProtection,
    private readonly reconcileQueue: ReconcileQueue,
    private readonly inDoubt: InDoubtStarts,
    private readonly balance: VerificationBalanceWatch,
    private readonly testNumbers: TestNumberSessions,
  ) {}

  /** Starts `attempt` as a session of journey `journeyId` (none: a journey's first session). */
  async run(attempt: StartAttempt, journeyId?: string): Promise<ProtectedStart<SessionRecord>> {
    // A test number (`testNumbers`): played by the module, so nothing to admit, count or settle.
    if (this.testNumbers.book.admit(attempt.phoneNumber, attempt.owner))
      return {
        result: await this.recorded(attempt, await this.api.initiate(this.request(attempt)), journeyId),
        coalesced: false,
        resendAvailableAt: null,
      };
    const permit = await this.protection.admitStart(attempt);
    try {
      const record = await this.initiate(attempt, permit, journeyId);
      await permit.commit(record);
      return { result: record, coalesced: false, resendAvailableAt: permit.resendAvailableAt };
    } finally {
      // Unsettled only when the store failed before or after the API call: a session may exist (and
      // be paid for), so everything the start took stays counted.
      if (!permit.isSettled) await permit.rollback({ nothingSent: false });
    }
  }

  private async initiate(
    { phoneNumber, method, owner }: StartAttempt,
    permit: StartPermit,
    journeyId: string | undefined,
  ): Promise<SessionRecord> {
    // A paid initiation whose session could not be recorded would never be followed: with the store
    // down, refuse before paying. An admission that wrote to it a moment ago already showed it up.
    if (!permit.storeReached) await this.records.ensureReachable();
    let result: InitiateResult;
    try {
      result = await this.api.initiate(this.request({ phoneNumber, method }));
    } catch (error) {
      // The API answered with a refusal, or the connection was refused: nothing was sent, and the
      // start gives back what it took (a time-out or a reset leaves it counted).
      await permit.rollback({ nothingSent: !mayHaveBeenProcessed(error) });
      // The session may exist (and be paid for) all the same: its first webhook can reveal it.
      if (mayHaveBeenProcessed(error)) await this.inDoubt.remember({ phoneNumber, method, owner });
      // Method not enabled for the account ("not shown": 400 with a code, or 403): say so when the API says so.
      if (
        error instanceof VerificationApiError &&
        error.status === 400 &&
        /method/.test(error.errorCode ?? '')
      )
        throw new VerificationClientError(
          'method_not_available',
          'This method is not available for this account',
        );
      throw await upstreamClientError(error, this.balance);
    }
    return this.recorded({ phoneNumber, owner }, result, journeyId, permit.suspected);
  }

  private request({ phoneNumber, method }: Pick<StartAttempt, 'phoneNumber' | 'method'>) {
    return { phoneNumber, method, expirySeconds: this.options.expirySeconds };
  }

  /** The started session, recorded and followed by the reconciler until its outcome is emitted. */
  private async recorded(
    { phoneNumber, owner }: Pick<StartAttempt, 'phoneNumber' | 'owner'>,
    result: InitiateResult,
    journeyId: string | undefined,
    suspected?: StartPermit['suspected'],
  ): Promise<SessionRecord> {
    const record = newSessionRecord(
      { ...result, phoneNumber: result.phoneNumber || phoneNumber },
      {
        owner,
        createdAt: this.store.now(),
        ttlMs:
          this.options.expirySeconds === undefined
            ? DEFAULT_SESSION_TTL_MS
            : this.options.expirySeconds * 1000,
        as: 'answer',
        journeyId,
        suspected,
      },
    );
    await this.records.save(record);
    // The reconciler follows every session started here until its outcome is emitted.
    await this.reconcileQueue.track(record);
    return record;
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import type { InitiateResult, KnownVerificationMethod } from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { TestNumberApiClient } from '../test-numbers/test-number-api.client.js';
import { mayHaveBeenProcessed, VerificationApiError } from '../api/verification-api.error.js';
import { newSessionRecord, type SessionRecord, type StartAssessmentFacts } from '../core/session-record.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import type { StartPermit } from '../protection/verification-protection.service.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from '../sessions/session-record.repository.js';
import type { IndexReservation } from '../sessions/subject-index.js';
import { TestNumberBook } from '../test-numbers/test-number-book.js';
import { forgottenMeanwhile } from './flow-outcomes.js';
import { InDoubtStarts } from './in-doubt-starts.js';
import { VerificationErasure } from './verification-erasure.js';
import { upstreamClientError } from './upstream-error.mapper.js';
import { PhoneVerificationError } from '../core/phone-verification.error.js';

/** The session a start asks the API for. */
export interface SessionOrder {
  /** E.164. */
  phoneNumber: string;
  method: KnownVerificationMethod;
  owner: string | undefined;
  /** What it is for (`purpose` on start; a switch keeps its journey's). */
  purpose?: string;
  /** A test start's client network (an IPv4 /24, an IPv6 /48): whose kept test sessions it counts in. */
  network?: string;
  /** The journey the session is a step of (none: a journey's first session). */
  journeyId?: string;
  /** Who asked for it (`browser:…`): kept sealed in the erasure index (see erasureCallersOf). */
  callers?: readonly string[];
}

/** What a paid start carries to its session's record. */
interface PaidTerms {
  suspected?: boolean;
  assessment?: StartAssessmentFacts;
  /** The erasure index slots reserved before paying (none: indexed once recorded). */
  reserved?: IndexReservation;
}

/**
 * The callers whose coalescing claims an erasure of a session's number or owner also forgets: its
 * browser key. A claim is named by its starter (the owner, else the browser key: `starterOf`), never
 * by the client key, which therefore is not kept.
 */
export function erasureCallersOf(browserKey: string | undefined): string[] {
  return browserKey === undefined ? [] : [`browser:${browserKey}`];
}

/**
 * Pays for one admitted start, a journey's first session or a switch's: the API is asked, the
 * session is recorded and followed, and protection's permit is settled with what happened (see
 * StartPermit). A test number's session is played by the module: nothing to admit or settle. A start
 * whose outcome is unknown is handed to InDoubtStarts.
 */
@Injectable()
export class PaidStart {
  /** The host's test numbers (the options' table; the API client plays their sessions). */
  private readonly testNumbers: TestNumberBook;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly api: VerificationApiClient,
    private readonly records: SessionRecordRepository,
    private readonly balance: VerificationBalanceWatch,
    private readonly inDoubt: InDoubtStarts,
    private readonly erasure: VerificationErasure,
  ) {
    this.testNumbers = new TestNumberBook(options.testNumbers);
  }

  /**
   * Whether a start of `phoneNumber` by `owner` is a test number's the module plays; for an owner not
   * on `testNumbers.owners` it is a real number.
   */
  plays(phoneNumber: string, owner: string | undefined): boolean {
    return (
      this.api instanceof TestNumberApiClient && this.testNumbers.admit(phoneNumber, owner) !== undefined
    );
  }

  /** A test number's session (see `testNumbers`): played by the module, nothing paid or settled. */
  async play(order: SessionOrder): Promise<SessionRecord> {
    if (!(this.api instanceof TestNumberApiClient) || !this.plays(order.phoneNumber, order.owner))
      throw new PhoneVerificationError('PaidStart.play: not a test number this owner may play');
    const starter = {
      ...(order.owner === undefined ? {} : { owner: order.owner }),
      ...(order.network === undefined ? {} : { network: order.network }),
    };
    return this.recorded(order, await this.api.play(this.request(order), starter), {});
  }

  /** Pays for `order` under `permit`, which it settles whatever happens. */
  async pay(order: SessionOrder, permit: StartPermit): Promise<SessionRecord> {
    try {
      // A paid initiation whose session could not be recorded would never be followed: with the store
      // down, refuse before paying. The probe reserves the session's erasure index slots (protection
      // issues it with its last writes), written with the record.
      const reserved = await (permit.reachable ?? this.records.reserveIndex(order));
      // The coalescing claim's lease outlasts the call from here, whatever the admission took before it.
      await permit.renewClaim().catch(async (error: unknown) => {
        await this.records.releaseIndex(reserved).catch(() => undefined);
        throw error;
      });
      const result = await this.initiate(order, permit, reserved.at).catch(async (error: unknown) => {
        // Whatever the API did, this reservation is not the one its session would be recorded with
        // (a session in doubt is indexed when it shows up): its slots are freed.
        await this.records.releaseIndex(reserved).catch(() => undefined);
        throw error;
      });
      // Settled right after the record's batch (its claim then hands it back), in the same round trip.
      return await this.recorded(
        order,
        result,
        { suspected: permit.suspected, assessment: permit.assessment, reserved },
        (record) => permit.commit(record),
      );
    } catch (error) {
      // Unsettled here only when the store failed before the API call (the API's own failures are settled
      // in `initiate`, a recorded session by `commit` as its batch goes out): with the store down, what the
      // start took stays counted rather than given back through it.
      await permit.rollback({ nothingSent: false, failure: error });
      throw error;
    }
  }

  /** `since`: when the start reserved its erasure index slots, just before the initiation is sent. */
  private async initiate(order: SessionOrder, permit: StartPermit, since: number): Promise<InitiateResult> {
    try {
      return await this.api.initiate(this.request(order));
    } catch (error) {
      const failure = await this.refusalOf(error);
      // The API answered with a refusal, or the connection was refused: nothing was sent, and the
      // start gives back what it took (a time-out or a reset leaves it counted).
      await permit.rollback({
        nothingSent: !mayHaveBeenProcessed(error),
        failure,
        ...(error instanceof VerificationApiError && error.status === 429
          ? { upstreamRetryAfterMs: error.retryAfterMs ?? 1000 }
          : {}),
      });
      // The session may exist (and be paid for) all the same: its first webhook can reveal it.
      if (mayHaveBeenProcessed(error)) await this.inDoubt.remember(order, since);
      throw failure;
    }
  }

  /** What the caller is told of a failed initiation. */
  private async refusalOf(error: unknown): Promise<unknown> {
    // Method not enabled for the account ("not shown": 400 with a code, or 403): say so when the API says so.
    if (error instanceof VerificationApiError && error.status === 400 && /method/.test(error.errorCode ?? ''))
      return new VerificationClientError(
        'method_not_available',
        'This method is not available for this account',
      );
    return upstreamClientError(error, this.balance);
  }

  private request({ phoneNumber, method }: SessionOrder) {
    return { phoneNumber, method, expirySeconds: this.options.expirySeconds };
  }

  /** The started session, recorded and followed by the reconciler until its outcome is emitted. */
  private async recorded(
    { phoneNumber, owner, purpose, journeyId, callers }: SessionOrder,
    result: InitiateResult,
    { suspected, assessment, reserved }: PaidTerms,
    whenStored?: (record: SessionRecord) => Promise<void>,
  ): Promise<SessionRecord> {
    // The number the start asked for, to which the API sends the code (its own session says so): an answer
    // that names another is not believed, or the host would be told of a verification of a number never entered.
    const record = newSessionRecord(
      { ...result, phoneNumber },
      {
        owner,
        purpose,
        assessment,
        createdAt: this.options.clock(),
        ttlMs: this.options.sessionTtlMs,
        as: 'answer',
        journeyId,
        suspected,
      },
    );
    // The reconciler follows every session started here until its outcome is emitted.
    const kept = await this.records.createAndFollow(record, callers, whenStored, reserved);
    // Its number or owner was erased while the API was asked: nothing of it is kept or answered.
    if (!kept) {
      await this.erasure.forgetSession(
        record.requestId,
        Math.max(record.expiresAt - this.options.clock(), 0) + RECORD_RETENTION_MS,
      );
      throw forgottenMeanwhile(record);
    }
    return record;
  }
}

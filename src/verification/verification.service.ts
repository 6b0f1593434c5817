import { Inject, Injectable } from '@nestjs/common';
import type { InitiateResult, KnownVerificationMethod } from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { mayHaveBeenProcessed, VerificationApiError } from '../api/verification-api.error.js';
import { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import { OfferedMethods } from '../account/offered-methods.js';
import { MethodStats } from '../account/method-stats.service.js';
import { VerificationTelemetry, type RouteFailureContext } from '../observability/verification-telemetry.js';
import {
  VerificationProtection,
  type ProtectedStart,
  type StartAttempt,
  type StartPermit,
} from '../protection/verification-protection.service.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import { asVerificationError, VerificationClientError } from '../core/verification.errors.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { InDoubtStarts } from '../sessions/in-doubt-starts.js';
import { PhoneNumberNormalizer } from './phone-number.policy.js';
import { ReconcileQueue } from '../sessions/reconcile-queue.js';
import { SessionRecordRecovery } from './session-record-recovery.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import {
  awaitsCode,
  codeLengthRange,
  DEFAULT_SESSION_TTL_MS,
  newSessionRecord,
  type SessionRecord,
} from '../core/session-record.js';
import { CODE_RULE, isVerificationCode } from '../core/verification-code.js';
import { methodTraits, pollIntervalMs } from '../core/verification-method.js';
import { isTerminal } from '../core/verification-status.js';
import { SessionRefresher } from '../sessions/session-refresher.js';
import { toStatusView } from './status-view.js';
import { apiSaidWrongCode, toClientError } from './upstream-error.mapper.js';
import { VerificationHandleCodec } from './verification-handle.codec.js';
import { VerificationListenerError, VerificationTracker } from '../sessions/verification.tracker.js';
import { checkRefusal } from './check-refusal.js';
import { fieldError, notPending, offeredMethod } from './client-refusals.js';
import type {
  CheckInput,
  CheckView,
  MethodView,
  StartInput,
  StartView,
  StatusView,
} from './verification.views.js';

/**
 * The operations behind the client routes, for hosts that mount their own routes too. Every error
 * a caller receives is a VerificationError (an HttpException): a refusal is a VerificationClientError,
 * and anything else that went wrong inside (store down, upstream garbage, a bug) becomes a 503
 * `service_unavailable` one, its cause logged here for the operator.
 */
@Injectable()
export class VerificationService {
  private readonly phones: PhoneNumberNormalizer;
  private readonly handles: VerificationHandleCodec;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly api: VerificationApiClient,
    private readonly records: SessionRecordRepository,
    private readonly tracker: VerificationTracker,
    private readonly refresher: SessionRefresher,
    private readonly protection: VerificationProtection,
    private readonly reconcileQueue: ReconcileQueue,
    private readonly telemetry: VerificationTelemetry,
    private readonly balance: VerificationBalanceWatch,
    private readonly inDoubt: InDoubtStarts,
    private readonly offered: OfferedMethods,
    private readonly recovery: SessionRecordRecovery,
    private readonly methodStats: MethodStats,
  ) {
    this.phones = new PhoneNumberNormalizer(options.phone);
    this.handles = new VerificationHandleCodec(options.handleKey ?? options.api.apiSecret);
  }

  /** Starts a verification (or hands back the caller's identical pending one). */
  async start(input: StartInput): Promise<StartView> {
    const startedAt = Date.now();
    const context: RouteFailureContext = { latencyMs: 0 };
    try {
      return await this.startLogged(input, context, startedAt);
    } catch (error) {
      this.telemetry.startFailed(error, { ...context, latencyMs: Date.now() - startedAt });
      throw asVerificationError(error);
    }
  }

  private async startLogged(
    input: StartInput,
    context: RouteFailureContext,
    startedAt: number,
  ): Promise<StartView> {
    const method = offeredMethod(input.method, this.options.methods, this.offered.current());
    context.method = method;
    if (typeof input.phoneNumber !== 'string')
      throw fieldError('phone_number', 'phone_number must be a string');
    const phone = this.phones.normalize(input.phoneNumber);
    context.phoneNumber = phone.e164;
    // Only a valid start asks which methods the account has (a cached price read): bad input never reaches the API.
    offeredMethod(method, await this.offered.list(), this.offered.current());
    const attempt: StartAttempt = {
      phoneNumber: phone.e164,
      method,
      owner: input.owner,
      ip: input.ip,
      clientKey: this.protection.clientKey(input.request, input.ip),
      browserKey: input.browserKey,
      request: input.request,
    };
    const outcome = await this.protection.coalesceStart(
      attempt,
      () => this.paidStart(attempt),
      (requestId) => this.pendingRecord(requestId),
    );
    const record = outcome.result;
    this.telemetry.started(record, outcome.coalesced, Date.now() - startedAt);
    if (!outcome.coalesced) await this.methodStats.started(record);
    return {
      verificationId: this.handles.seal(record.requestId, input.owner),
      method: record.method,
      status: record.status,
      phoneNumber: record.phoneNumber,
      expiresAt: new Date(record.expiresAt),
      pollIntervalMs: pollIntervalMs(record.method),
      resendAvailableAt: outcome.resendAvailableAt,
      codeLength: record.codeLength,
      ...codeLengthRange(record),
      numberToCall: record.numberToCall,
      deepLink: record.deepLink,
      awaitingCode: awaitsCode(record),
      resumed: outcome.coalesced,
    };
  }

  /** Submits a code. `verified: false` with `status: 'sent'` means operator_id accepted it and the result follows. */
  async check(input: CheckInput): Promise<CheckView> {
    const startedAt = Date.now();
    const context: RouteFailureContext = { latencyMs: 0 };
    try {
      return await this.checkLogged(input, context, startedAt);
    } catch (error) {
      this.telemetry.checkFailed(error, { ...context, latencyMs: Date.now() - startedAt });
      throw asVerificationError(error);
    }
  }

  private async checkLogged(
    input: CheckInput,
    context: RouteFailureContext,
    startedAt: number,
  ): Promise<CheckView> {
    const requestId = this.openHandle(input.verificationId, input.owner);
    context.requestId = requestId;
    if (!isVerificationCode(input.code)) throw fieldError('code', `code must be ${CODE_RULE}`);
    await this.protection.assertCheckAllowed(this.protection.clientKey(input.request, input.ip));
    const record =
      (await this.records.get(requestId)) ?? (await this.recovery.require(requestId, input.owner));
    context.method = record.method;
    if (methodTraits(record.method).codeEntry === 'never')
      throw new VerificationClientError(
        'method_not_available',
        'This verification is confirmed by the call; there is no code to check',
      );
    if (isTerminal(record.status)) throw notPending(record.status);
    if (record.expiresAt <= this.store.now()) throw notPending('expired');

    const wrongCodes = await this.protection.holdWrongCode(record.phoneNumber, input.owner);
    let result;
    try {
      result = await this.api.check({ requestId, code: input.code });
    } catch (error) {
      const failure = await checkRefusal(error, record, {
        now: this.store.now(),
        refresh: (stale) => this.refreshQuietly(stale),
        upstreamFailure: (cause) => this.upstreamFailure(cause),
      });
      await wrongCodes.settle(apiSaidWrongCode(error, failure));
      throw failure;
    }
    await wrongCodes.settle(false);
    const observed = await this.tracker.observeQuietly(
      {
        ...result,
        method: record.method,
        verifiedAt: result.status === 'verified' ? new Date(this.store.now()) : null,
      },
      'check',
      record,
    );
    this.telemetry.checked(observed, Date.now() - startedAt);
    return {
      verificationId: input.verificationId,
      status: observed.status,
      verified: observed.status === 'verified',
    };
  }

  /** The session as a frontend may see it, fresh within one poll interval. */
  async status(verificationId: string, owner?: string): Promise<StatusView> {
    return this.failingAsVerificationError('status', () => this.statusChecked(verificationId, owner));
  }

  private async statusChecked(verificationId: string, owner: string | undefined): Promise<StatusView> {
    const startedAt = Date.now();
    const requestId = this.openHandle(verificationId, owner);
    let record = await this.records.get(requestId);
    // A record the store lost is rebuilt from the API: that read is this poll's fresh one.
    if (!record) record = await this.recovery.require(requestId, owner);
    else
      try {
        record = await this.refresher.refresh(record, 'poll');
      } catch (error) {
        // The last known state keeps the page alive; the reconciler and webhooks catch up.
        if (error instanceof VerificationApiError && error.status === 404)
          throw new VerificationClientError('not_found');
        if (!(error instanceof VerificationListenerError)) this.telemetry.statusServedStale(record, error);
        record = (await this.records.get(requestId)) ?? record;
      }
    this.telemetry.statusServed(record, Date.now() - startedAt);
    return toStatusView(verificationId, record);
  }

  /** The methods this deployment offers to frontends (see OfferedMethods). */
  async methods(): Promise<MethodView[]> {
    return (await this.offered.list()).map((method) => ({
      method,
      codeEntry: methodTraits(method).codeEntry,
      pollIntervalMs: pollIntervalMs(method),
    }));
  }

  /**
   * The verified E.164 number behind a handle, or null: asked from the API (the source of truth),
   * so the host never has to trust a frontend's claim.
   */
  async getVerifiedPhone(verificationId: string, owner?: string): Promise<string | null> {
    return this.failingAsVerificationError('getVerifiedPhone', () =>
      this.verifiedPhone(verificationId, owner),
    );
  }

  private async verifiedPhone(verificationId: string, owner: string | undefined): Promise<string | null> {
    const requestId = this.handles.open(verificationId, owner);
    if (requestId === null) return null;
    const record = await this.records.get(requestId);
    if (!record) {
      const recovered = await this.recovery.recover(requestId, owner);
      return recovered?.status === 'verified' ? recovered.phoneNumber : null;
    }
    const session = await this.api.getSession(requestId);
    const observed = await this.tracker.observeQuietly(session, 'poll', record);
    return observed.status === 'verified' ? observed.phoneNumber : null;
  }

  /* ---------------------------------------------------------------- internals */

  /** Runs `operation`; what is not a package error is logged and thrown as a 503 one (see asVerificationError). */
  private async failingAsVerificationError<T>(route: string, operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (error) {
      this.telemetry.unexpectedFailure(route, error);
      throw asVerificationError(error);
    }
  }

  private openHandle(verificationId: unknown, owner: string | undefined): string {
    const requestId = this.handles.open(verificationId, owner);
    if (requestId === null) throw new VerificationClientError('not_found');
    return requestId;
  }

  /**
   * One paid start under a permit: protection admits it (or throws its refusal), the API is asked,
   * and the permit is settled with what happened (see StartPermit).
   */
  private async paidStart(attempt: StartAttempt): Promise<ProtectedStart<SessionRecord>> {
    const permit = await this.protection.admitStart(attempt);
    try {
      const record = await this.initiate(attempt.phoneNumber, attempt.method, attempt.owner, permit);
      await permit.commit(record);
      return { result: record, coalesced: false, resendAvailableAt: permit.resendAvailableAt };
    } finally {
      // Unsettled only when the store failed before or after the API call: a session may exist (and
      // be paid for), so everything the start took stays counted.
      if (!permit.isSettled) await permit.rollback({ nothingSent: false });
    }
  }

  private async initiate(
    phoneNumber: string,
    method: KnownVerificationMethod,
    owner: string | undefined,
    permit: StartPermit,
  ): Promise<SessionRecord> {
    // A paid initiation whose session could not be recorded would never be followed: with the store
    // down, refuse before paying. An admission that wrote to it a moment ago already showed it up.
    if (!permit.storeReached) await this.records.ensureReachable();
    let result: InitiateResult;
    try {
      result = await this.api.initiate({ phoneNumber, method, expirySeconds: this.options.expirySeconds });
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
      throw await this.upstreamFailure(error);
    }
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
      },
    );
    await this.records.save(record);
    // The reconciler follows every session started here until its outcome is emitted.
    await this.reconcileQueue.track(record);
    return record;
  }

  private async pendingRecord(requestId: string): Promise<SessionRecord | null> {
    const record = await this.records.get(requestId);
    if (!record || isTerminal(record.status) || record.expiresAt <= this.store.now()) return null;
    return record;
  }

  private async refreshQuietly(record: SessionRecord): Promise<SessionRecord> {
    try {
      return await this.tracker.observeQuietly(await this.api.getSession(record.requestId), 'poll', record);
    } catch {
      return record;
    }
  }

  private async upstreamFailure(error: unknown): Promise<VerificationClientError> {
    // The upstream attempt itself was logged by the client's hook; a 402 also raises balance_insufficient.
    await this.balance.noteUpstreamFailure(error);
    return toClientError(error);
  }
}

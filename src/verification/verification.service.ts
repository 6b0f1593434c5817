import { Inject, Injectable } from '@nestjs/common';
import type { KnownVerificationMethod } from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import { OfferedMethods } from '../account/offered-methods.js';
import { MethodStats } from '../account/method-stats.service.js';
import { VerificationTelemetry, type RouteFailureContext } from '../observability/verification-telemetry.js';
import {
  VerificationProtection,
  type ProtectedStart,
  type StartAttempt,
} from '../protection/verification-protection.service.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import { asVerificationError, VerificationClientError } from '../core/verification.errors.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { PhoneNumberNormalizer } from './phone-number.policy.js';
import { ReconcileQueue } from '../sessions/reconcile-queue.js';
import { SessionRecordRecovery } from './session-record-recovery.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import type { SessionRecord } from '../core/session-record.js';
import { CODE_RULE, isVerificationCode } from '../core/verification-code.js';
import { methodTraits, pollIntervalMs, VERIFICATION_METHODS } from '../core/verification-method.js';
import { isTerminal } from '../core/verification-status.js';
import { SessionRefresher } from '../sessions/session-refresher.js';
import { apiSaidWrongCode, upstreamClientError } from './upstream-error.mapper.js';
import { VerificationHandleCodec } from '../core/verification-handle.codec.js';
import { VerificationListenerError, VerificationTracker } from '../sessions/verification.tracker.js';
import { checkRefusal } from './check-refusal.js';
import {
  deviceHint,
  fieldError,
  notPending,
  offeredMethod,
  switchInProgress,
  switchRefusal,
} from './client-refusals.js';
import {
  answeringSession,
  decideSwitch,
  oneStepJourney,
  withStep,
  type DeviceHint,
  type JourneyStep,
} from '../core/journey.js';
import { normalizeMethod } from '../api/method-names.js';
import { ProtectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';
import { JourneyRepository } from '../sessions/journey.repository.js';
import { SessionChanges } from '../sessions/session-changes.js';
import { JourneyState, type LoadedJourney } from './journey-state.js';
import { PaidStart } from './paid-start.js';
import { isTestSession } from '../core/test-session.js';
import { VerificationHistory } from '../history/verification-history.service.js';
import { VerificationTracing } from '../observability/verification-tracing.js';
import type { VerificationHistoryEntry } from '../history/verification-history.types.js';
import { TestNumberSessions } from '../test-numbers/test-number-sessions.js';
import { toStartView } from './start-view.js';
import { OrchestrationPolicy } from './orchestration.policy.js';
import type {
  CancelInput,
  CancelView,
  CheckInput,
  CheckView,
  MethodView,
  StartInput,
  StartView,
  StatusView,
  SwitchInput,
} from './verification.views.js';

/** The history entry of a start or switch that went through. */
function startEntry(
  kind: 'start' | 'switch',
  record: SessionRecord,
  owner: string | undefined,
  resumed: boolean,
): Omit<VerificationHistoryEntry, 'at' | 'test'> {
  return {
    kind,
    phoneNumber: record.phoneNumber,
    owner,
    method: record.method,
    requestId: record.requestId,
    status: record.status,
    cost: record.cost ?? null,
    ...(resumed ? { resumed } : {}),
  };
}

/** A test number's check holds nothing of protection's wrong-code budgets. */
const NOTHING_HELD = { settle: async (_wrongCode: boolean): Promise<void> => undefined };

/** `method` of a start or switch that leaves the choice to the orchestration policy. */
const AUTO = 'auto';

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

  /** @internal Made by the module (dependency injection), never by a host. */
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
    private readonly offered: OfferedMethods,
    private readonly recovery: SessionRecordRecovery,
    private readonly methodStats: MethodStats,
    private readonly journeys: JourneyRepository,
    private readonly journeyState: JourneyState,
    private readonly policy: OrchestrationPolicy,
    private readonly changes: SessionChanges,
    private readonly paidStart: PaidStart,
    private readonly testNumbers: TestNumberSessions,
    private readonly history: VerificationHistory,
    private readonly tracing: VerificationTracing,
  ) {
    this.phones = new PhoneNumberNormalizer(options.phone);
    this.handles = new VerificationHandleCodec(options.handleKey ?? options.api.apiSecret);
  }

  /**
   * Starts a verification (or hands back the caller's identical pending one). `method` may be `auto`
   * (or left out): the orchestration policy picks the first method it offers for the device hint.
   */
  async start(input: StartInput): Promise<StartView> {
    return this.tracing.span('start', async (span) => {
      const startedAt = Date.now();
      const context: RouteFailureContext = { latencyMs: 0 };
      try {
        const view = await this.startLogged(input, context, startedAt);
        span.set({ method: view.method, outcome: view.resumed ? 'resumed' : view.status });
        return view;
      } catch (error) {
        span.set({ method: context.method });
        this.telemetry.startFailed(error, { ...context, latencyMs: Date.now() - startedAt });
        await this.history.refused('start', error, context, input.owner);
        throw asVerificationError(error);
      }
    });
  }

  private async startLogged(
    input: StartInput,
    context: RouteFailureContext,
    startedAt: number,
  ): Promise<StartView> {
    const auto = input.method === undefined || input.method === AUTO;
    let method = auto ? undefined : offeredMethod(input.method, this.options.methods, this.offered.current());
    context.method = method;
    if (typeof input.phoneNumber !== 'string')
      throw fieldError('phone_number', 'phone_number must be a string');
    const device = deviceHint(input.device);
    const phone = this.phones.normalize(input.phoneNumber);
    context.phoneNumber = phone.e164;
    // Only a valid start asks which methods the account has (a cached price read): bad input never reaches the API.
    const offered = await this.offered.list();
    // What a graded answer may offer: in the policy's order for `auto` (it takes the first); an
    // explicit method needs no price read (the frontend picks).
    const ordered = auto ? await this.orderedFor(offered, device) : this.allowedFor(offered, device);
    method =
      method === undefined
        ? await this.firstMethod(offered, device)
        : offeredMethod(method, offered, offered);
    context.method = method;
    const attempt: StartAttempt = {
      phoneNumber: phone.e164,
      method,
      offered: ordered,
      owner: input.owner,
      ip: input.ip,
      clientKey: this.protection.clientKey(input.request, input.ip),
      browserKey: input.browserKey,
      request: input.request,
    };
    // A test number is not coalesced either: protection keeps nothing of it.
    const run = (a: StartAttempt) =>
      this.testNumbers.plays(a.phoneNumber)
        ? this.paidStart.run(a)
        : this.protection.coalesceStart(
            a,
            () => this.paidStart.run(a),
            (requestId) => this.pendingRecord(requestId),
          );
    let outcome: Awaited<ReturnType<typeof run>>;
    try {
      outcome = await run(attempt);
    } catch (error) {
      // A graded answer: `auto` takes the policy's first method charged on proof, as the host's
      // page would (an explicit method gets the 409 `method_held` naming them).
      const graded = auto ? gradedMethod(error) : undefined;
      if (graded === undefined) throw error;
      context.method = graded;
      outcome = await run({ ...attempt, method: graded });
    }
    const started = outcome.result;
    if (device !== undefined && !outcome.coalesced) await this.rememberDevice(started, device);
    this.telemetry.started(started, outcome.coalesced, Date.now() - startedAt);
    await this.history.record(startEntry('start', started, input.owner, outcome.coalesced));
    if (!outcome.coalesced) await this.methodStats.tally(started, callerOf(attempt), device);
    const journeyId = started.journeyId ?? started.requestId;
    // A resumed session may be a step the journey switched away from: the answer is the journey's
    // current step (status and check go there), under the handle the frontend already holds.
    const loaded = outcome.coalesced ? await this.journeyState.read(journeyId) : null;
    const record = loaded?.current ?? started;
    const view = toStartView(
      this.handles.seal(journeyId, input.owner),
      record,
      outcome.resendAvailableAt,
      outcome.coalesced,
    );
    return loaded ? { ...view, ...this.journeyToken(loaded.journey, input.owner) } : view;
  }

  /** The policy's first method for a new journey: its order of the offered methods, less those the device excludes. */
  /** The offered methods in the policy's order, those the device hint rules out left out. */
  private async orderedFor(
    offered: KnownVerificationMethod[],
    device: DeviceHint | undefined,
  ): Promise<KnownVerificationMethod[]> {
    return this.allowedFor(await this.policy.order(offered), device);
  }

  /** The methods the device hint does not rule out. */
  private allowedFor(
    methods: readonly KnownVerificationMethod[],
    device: DeviceHint | undefined,
  ): KnownVerificationMethod[] {
    const excluded: readonly string[] = device === undefined ? [] : this.policy.exclude[device];
    return methods.filter((method) => !excluded.includes(method));
  }

  private async firstMethod(
    offered: KnownVerificationMethod[],
    device: DeviceHint | undefined,
  ): Promise<KnownVerificationMethod> {
    const excluded: readonly string[] = device === undefined ? [] : this.policy.exclude[device];
    const ordered = (await this.policy.order(offered)).filter((method) => !excluded.includes(method));
    if (ordered.length === 0)
      throw new VerificationClientError('method_not_available', 'No method is offered here for this device', {
        available_methods: offered,
      });
    return ordered[0]!;
  }

  /** The device hint is kept on the journey for its switches; a store failure here loses only the hint. */
  private async rememberDevice(record: SessionRecord, device: DeviceHint): Promise<void> {
    try {
      await this.journeys.save(oneStepJourney(record, device), record.expiresAt);
    } catch (error) {
      this.telemetry.unexpectedFailure('start', error);
    }
  }

  /**
   * Moves a journey to another method for the same number: the named one, or the policy's next.
   * The new session is paid for under the same protection as a start (limits, spend cap, pumping
   * defence; the resend cooldown is its own method's), one switch per journey at a time across
   * every instance (a step claim in the store). The previous session is no longer followed for the
   * frontend; the reconciler follows it to its outcome, whose events still fire.
   */
  async switchMethod(input: SwitchInput): Promise<StartView> {
    return this.tracing.span('switch', async (span) => {
      const startedAt = Date.now();
      const context: RouteFailureContext = { latencyMs: 0 };
      try {
        const view = await this.switchLogged(input, context, startedAt);
        span.set({ method: view.method, outcome: view.resumed ? 'resumed' : view.status });
        return view;
      } catch (error) {
        span.set({ method: context.method });
        this.telemetry.startFailed(error, { ...context, latencyMs: Date.now() - startedAt }, 'switch');
        await this.history.refused('switch', error, context, input.owner);
        throw asVerificationError(error);
      }
    });
  }

  private async switchLogged(
    input: SwitchInput,
    context: RouteFailureContext,
    startedAt: number,
  ): Promise<StartView> {
    const journeyId = await this.openJourney(input.verificationId, input.owner, input.journeyToken);
    context.requestId = journeyId;
    const named = namedMethod(input.method);
    const loaded = await this.freshJourney(journeyId, input.owner);
    const { journey, current } = loaded;
    context.phoneNumber = journey.phoneNumber;
    const options = await this.journeyState.options(loaded);
    const now = this.store.now();
    const decision = decideSwitch({
      journey,
      status: options.status,
      current,
      remaining: options.remaining,
      named,
      priceMinor: options.priceOf,
      spentMinor: options.spentMinor,
      maxSteps: this.policy.maxSteps,
      maxCostMinor: this.policy.maxCostMinor,
      timeoutMs: await this.journeyState.fallbackAfterMs(loaded),
      skippable: this.policy.skippable(current.method),
      now,
    });
    if ('refusal' in decision) throw switchRefusal(decision.refusal, named, now);
    context.method = decision.method;

    const claim = await this.journeys.claimStep(journeyId, journey.steps.length);
    if (!claim) throw switchInProgress();
    let latest: typeof journey;
    let outcome: ProtectedStart<SessionRecord>;
    try {
      // Under the claim: a switch that finished since the read (or a cancel) decides.
      latest = (await this.journeys.get(journeyId)) ?? journey;
      if (latest.steps.length !== journey.steps.length) throw switchInProgress();
      if (latest.canceledAt !== undefined) throw notPending('canceled');
      outcome = await this.paidStart.run(
        {
          phoneNumber: journey.phoneNumber,
          method: decision.method,
          owner: input.owner,
          ip: input.ip,
          clientKey: this.protection.clientKey(input.request, input.ip),
          browserKey: input.browserKey,
          request: input.request,
          ...(isKnown(current.method) ? { switchedFrom: current.method } : {}),
          // A suspected switch is offered the journey's remaining methods charged on proof.
          offered: options.remaining,
        },
        journeyId,
      );
    } catch (error) {
      await this.journeys.releaseStep(claim).catch(() => undefined);
      throw error;
    }
    // The claim stays: it expires on its own, and this step is taken.
    const record = outcome.result;
    const moved = withStep(latest, {
      requestId: record.requestId,
      method: record.method,
      startedAt: record.createdAt,
    });
    await this.journeys.save(moved, record.expiresAt);
    await this.methodStats.tally(
      record,
      callerOf({ owner: input.owner, clientKey: this.protection.clientKey(input.request, input.ip) }),
      moved.device,
    );
    // Status streams of the journey move to the new session.
    await this.changes.announce(journeyId);
    this.telemetry.started(record, false, Date.now() - startedAt, 'switch');
    await this.history.record(startEntry('switch', record, input.owner, false));
    return {
      ...toStartView(input.verificationId, record, outcome.resendAvailableAt, false),
      ...this.journeyToken(moved, input.owner),
    };
  }

  /**
   * Ends a journey for the frontend (`canceled`, idempotent), after one more fresh look at its pending
   * steps (an outcome of the last second is emitted and refuses the cancel). Its status polls stop
   * asking the API. A late outcome still reaches listeners: by webhook, or without webhooks through
   * the reconciler, which follows the pending sessions to their end at the lazy pace. A verified
   * journey is not canceled (409 `not_pending`).
   */
  async cancel(input: CancelInput): Promise<CancelView> {
    return this.tracing.span('cancel', async (span) => {
      const view = await this.failingAsVerificationError('cancel', () => this.cancelChecked(input));
      span.set({ outcome: view.status });
      return view;
    });
  }

  private async cancelChecked(input: CancelInput): Promise<CancelView> {
    const journeyId = await this.openJourney(input.verificationId, input.owner, input.journeyToken);
    // A cancel writes to the store for its caller: it counts as a check does against the caller's limit
    // (not a test number's: protection counts nothing of those).
    if (!isTestSession(journeyId))
      await this.protection.assertCheckAllowed(this.protection.clientKey(input.request, input.ip));
    const canceled: CancelView = { verificationId: input.verificationId, status: 'canceled' };
    const seen = await this.journeyState.load(journeyId, input.owner);
    if (seen.journey.canceledAt !== undefined) return canceled;
    // Once more, fresh from the API, before letting go: the user may have just finished a step.
    const loaded = await this.lookOnceMore(seen);
    const { status } = answeringSession(loaded.journey, loaded.records, loaded.current);
    if (status === 'verified') throw notPending('verified');
    const claim = await this.journeys.claimStep(journeyId, loaded.journey.steps.length);
    if (!claim) throw switchInProgress();
    try {
      const latest = (await this.journeys.get(journeyId)) ?? loaded.journey;
      await this.journeys.save({ ...latest, canceledAt: this.store.now() }, loaded.current.expiresAt);
    } finally {
      await this.journeys.releaseStep(claim).catch(() => undefined);
    }
    // With webhooks, nothing more is polled (a late outcome arrives by webhook); without them the
    // reconciler follows the pending sessions to their end (see VerificationReconciler).
    if (this.options.webhooks.enabled)
      for (const record of loaded.records)
        if (record && !isTerminal(record.status)) await this.reconcileQueue.release(record.requestId);
    await this.changes.announce(journeyId);
    this.telemetry.canceled(loaded.current, loaded.journey.steps.length);
    return canceled;
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
          return await this.tracker.observeQuietly(
            await this.api.getSession(record.requestId),
            'poll',
            record,
          );
        } catch (error) {
          this.telemetry.statusServedStale(record, error);
          return record;
        }
      }),
    );
    const current = records[records.length - 1] ?? loaded.current;
    return { ...loaded, records, current };
  }

  /** Submits a code. `verified: false` with `status: 'sent'` means operator_id accepted it and the result follows. */
  async check(input: CheckInput): Promise<CheckView> {
    return this.tracing.span('check', async (span) => {
      const startedAt = Date.now();
      const context: RouteFailureContext = { latencyMs: 0 };
      try {
        const view = await this.checkLogged(input, context, startedAt);
        span.set({ method: context.method, outcome: view.status });
        return view;
      } catch (error) {
        span.set({ method: context.method });
        this.telemetry.checkFailed(error, { ...context, latencyMs: Date.now() - startedAt });
        await this.history.refused('check', error, context, input.owner);
        throw asVerificationError(error);
      }
    });
  }

  private async checkLogged(
    input: CheckInput,
    context: RouteFailureContext,
    startedAt: number,
  ): Promise<CheckView> {
    const journeyId = this.openHandle(input.verificationId, input.owner);
    context.requestId = journeyId;
    if (!isVerificationCode(input.code)) throw fieldError('code', `code must be ${CODE_RULE}`);
    // A test number's checks are held by its own budgets (TestNumberSessions), not counted by protection.
    const test = isTestSession(journeyId);
    if (!test) await this.protection.assertCheckAllowed(this.protection.clientKey(input.request, input.ip));
    await this.adoptCarried(journeyId, input.owner, input.journeyToken);
    // The code is the current method's: a journey checks it against its current session.
    const loaded = await this.journeyState.load(journeyId, input.owner);
    const record = loaded.current;
    const requestId = record.requestId;
    context.method = record.method;
    context.phoneNumber = record.phoneNumber;
    // Over for the frontend: canceled, or verified by a method it switched away from.
    const journeyStatus = answeringSession(loaded.journey, loaded.records, record).status;
    if (journeyStatus === 'canceled' || (journeyStatus === 'verified' && record.status !== 'verified'))
      throw notPending(journeyStatus);
    if (methodTraits(record.method).codeEntry === 'never')
      throw new VerificationClientError(
        'method_not_available',
        'This verification is confirmed by the call; there is no code to check',
      );
    if (isTerminal(record.status)) throw notPending(record.status);
    if (record.expiresAt <= this.store.now()) throw notPending('expired');

    const wrongCodes = test
      ? NOTHING_HELD
      : await this.protection.holdWrongCode(record.phoneNumber, input.owner);
    let result;
    try {
      result = await this.api.check({ requestId, code: input.code });
    } catch (error) {
      const failure = await checkRefusal(error, record, {
        now: this.store.now(),
        refresh: (stale) => this.refreshQuietly(stale),
        upstreamFailure: (cause) => upstreamClientError(cause, this.balance),
      });
      await wrongCodes.settle(apiSaidWrongCode(error, failure));
      throw failure;
    }
    await wrongCodes.settle(false);
    // Before the outcome it causes (the tracker's event writes its own entry).
    await this.history.record({
      kind: 'check',
      check: result.status === 'verified' ? 'right' : undefined,
      status: result.status,
      phoneNumber: record.phoneNumber,
      owner: input.owner,
      method: record.method,
      requestId,
    });
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

  /**
   * The verification (its journey) as a frontend may see it: the current method's session, fresh
   * within one poll interval, with the methods tried, those it may switch to and when.
   */
  async status(verificationId: string, owner?: string, journeyToken?: string): Promise<StatusView> {
    return this.failingAsVerificationError('status', () =>
      this.statusChecked(verificationId, owner, journeyToken),
    );
  }

  private async statusChecked(
    verificationId: string,
    owner: string | undefined,
    journeyToken: string | undefined,
  ): Promise<StatusView> {
    const startedAt = Date.now();
    const journeyId = await this.openJourney(verificationId, owner, journeyToken);
    const loaded = await this.freshJourney(journeyId, owner);
    this.telemetry.statusServed(loaded.current, Date.now() - startedAt);
    return {
      ...(await this.journeyState.view(verificationId, loaded)),
      ...this.journeyToken(loaded.journey, owner),
    };
  }

  /**
   * The journey a handle names, its current session fresh within one poll interval (a record the
   * store lost is rebuilt from the API: that read is this call's fresh one). A canceled journey is
   * not asked about: nothing more is polled for it. A switched-away session is read as stored.
   */
  private async freshJourney(journeyId: string, owner: string | undefined): Promise<LoadedJourney> {
    const loaded = await this.journeyState.load(journeyId, owner);
    if (loaded.recovered || loaded.journey.canceledAt !== undefined) return loaded;
    const record = loaded.current;
    try {
      return this.journeyState.withCurrent(loaded, await this.refresher.refresh(record, 'poll'));
    } catch (error) {
      // The last known state keeps the page alive; the reconciler and webhooks catch up.
      if (error instanceof VerificationApiError && error.status === 404)
        throw new VerificationClientError('not_found');
      if (!(error instanceof VerificationListenerError)) this.telemetry.statusServedStale(record, error);
      return this.journeyState.withCurrent(loaded, (await this.records.get(record.requestId)) ?? record);
    }
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
   * so the host never has to trust a frontend's claim. Any method of the journey may have verified it
   * (the newest is asked first); a canceled journey answers null.
   */
  async getVerifiedPhone(
    verificationId: string,
    owner?: string,
    journeyToken?: string,
  ): Promise<string | null> {
    return this.failingAsVerificationError('getVerifiedPhone', () =>
      this.verifiedPhone(verificationId, owner, journeyToken),
    );
  }

  private async verifiedPhone(
    verificationId: string,
    owner: string | undefined,
    journeyToken: string | undefined,
  ): Promise<string | null> {
    const journeyId = this.handles.open(verificationId, owner);
    if (journeyId === null) return null;
    await this.adoptCarried(journeyId, owner, journeyToken);
    const journey = await this.journeys.get(journeyId);
    // A canceled journey is over for its frontend, whatever arrived late.
    if (journey?.canceledAt !== undefined) return null;
    const steps = journey ? [...journey.steps].reverse() : [{ requestId: journeyId }];
    for (const { requestId } of steps) {
      const phone = await this.verifiedPhoneOf(requestId, owner);
      if (phone !== null) return phone;
    }
    return null;
  }

  /** One session's verified number as the API says it; a session whose record ended otherwise is not asked about. */
  private async verifiedPhoneOf(requestId: string, owner: string | undefined): Promise<string | null> {
    const record = await this.records.get(requestId);
    if (!record) {
      const recovered = await this.recovery.recover(requestId, owner);
      return recovered?.status === 'verified' ? recovered.phoneNumber : null;
    }
    if (isTerminal(record.status) && record.status !== 'verified') return null;
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

  /** The journey a handle names (404 `not_found` for anything else), its record put back from `journeyToken` when the store lost it. */
  private async openJourney(
    verificationId: unknown,
    owner: string | undefined,
    journeyToken: string | undefined,
  ): Promise<string> {
    const journeyId = this.openHandle(verificationId, owner);
    await this.adoptCarried(journeyId, owner, journeyToken);
    return journeyId;
  }

  /** A token that does not open for this owner, or names another journey, is no token (the handle alone decides). */
  private async adoptCarried(
    journeyId: string,
    owner: string | undefined,
    journeyToken: string | undefined,
  ): Promise<void> {
    if (journeyToken === undefined) return;
    const carried = this.handles.openJourney(journeyToken, owner);
    if (carried?.journeyId === journeyId) await this.journeyState.adopt(carried, owner);
  }

  /** `journeyToken` for an answer: once the journey has more than one step (the handle carries the first). */
  private journeyToken(
    journey: { journeyId: string; steps: JourneyStep[]; device?: DeviceHint },
    owner: string | undefined,
  ): { journeyToken?: string } {
    if (journey.steps.length < 2) return {};
    return { journeyToken: this.handles.sealJourney(journey, owner) };
  }

  private openHandle(verificationId: unknown, owner: string | undefined): string {
    const requestId = this.handles.open(verificationId, owner);
    if (requestId === null) throw new VerificationClientError('not_found');
    return requestId;
  }

  /** The session an identical start may resume: pending, and of a journey that was not canceled. */
  private async pendingRecord(requestId: string): Promise<SessionRecord | null> {
    const record = await this.records.get(requestId);
    if (!record || isTerminal(record.status) || record.expiresAt <= this.store.now()) return null;
    const journey = await this.journeys.get(record.journeyId ?? record.requestId);
    if (journey?.canceledAt !== undefined) return null;
    return record;
  }

  private async refreshQuietly(record: SessionRecord): Promise<SessionRecord> {
    try {
      return await this.tracker.observeQuietly(await this.api.getSession(record.requestId), 'poll', record);
    } catch {
      return record;
    }
  }
}

/** The method a switch names (canonical), or undefined for the policy's next (`auto` or none). */
function namedMethod(method: unknown): string | undefined {
  if (method === undefined || method === AUTO) return undefined;
  if (typeof method !== 'string') throw fieldError('method', 'method must be a string');
  return normalizeMethod(method);
}

function isKnown(method: string): method is KnownVerificationMethod {
  return (VERIFICATION_METHODS as readonly string[]).includes(method);
}

/** Who a start's method figures count as a caller: the owner, else the client key. */
function callerOf(attempt: { owner?: string; clientKey?: string }): string | undefined {
  if (attempt.owner !== undefined) return `owner:${attempt.owner}`;
  return attempt.clientKey === undefined ? undefined : `client:${attempt.clientKey}`;
}

/** The first method a graded answer (409 `method_held`) offers, or undefined for any other error. */
function gradedMethod(error: unknown): KnownVerificationMethod | undefined {
  if (!(error instanceof ProtectionRefusal) || error.reason !== ProtectionRefusalReason.methodHeld)
    return undefined;
  const offered = error.extra.offered_methods;
  return Array.isArray(offered) && typeof offered[0] === 'string' && isKnown(offered[0])
    ? offered[0]
    : undefined;
}

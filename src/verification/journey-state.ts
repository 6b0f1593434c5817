import { Inject, Injectable } from '@nestjs/common';
import type { KnownVerificationMethod } from '../api/api.types.js';
import { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import { PriceBook } from '../account/price-book.js';
import {
  answeringSession,
  currentStep,
  decideSwitch,
  fallbackAvailableAt,
  journeyExposureMinor,
  methodsTried,
  oneStepJourney,
  remainingMethods,
  retriableMethods,
  switchableMethods,
  type DeviceHint,
  type JourneyRecord,
  type JourneyStatus,
} from '../core/journey.js';
import { chargedCost, MAX_SESSION_TTL_MS, type SessionRecord } from '../core/session-record.js';
import { isTerminal } from '../core/verification-status.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { SessionRefresher } from '../sessions/session-refresher.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { methodsForPurpose, type ResolvedPurposes } from '../options/purposes.options.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { OrchestrationPolicy, type MethodPlan, type PriceOf } from './orchestration.policy.js';
import { toStatusView } from './status-view.js';
import { upstreamClientError } from './upstream-error.mapper.js';
import type { CarriedJourney } from '../core/verification-handle.codec.js';
import type { StatusView } from './verification.views.js';

/** A journey as read from the store, with its steps' session records. */
export interface LoadedJourney {
  journey: JourneyRecord;
  /** The steps' records in step order (null where the store has none); the last is `current`. */
  records: (SessionRecord | null)[];
  /** The current step's record. */
  current: SessionRecord;
  /** True when `current` was just rebuilt from the API (it is as fresh as a poll). */
  recovered: boolean;
}

/** Where a journey may go from here: the methods left in the policy's order, and what they cost. */
export interface JourneyOptions {
  status: JourneyStatus;
  /** The policy's order of the offered methods, less those tried and excluded for the device. */
  remaining: KnownVerificationMethod[];
  /** Tried methods charged on proof a switch may name again (retriableMethods). */
  retriable: KnownVerificationMethod[];
  /** Those a switch may take now (steps and money left). */
  switchable: KnownVerificationMethod[];
  priceOf: PriceOf;
  spentMinor: number;
}

/**
 * Reads journeys for the status route, the switch and cancel routes and the status streams: the
 * journey a handle names (no journey record: its first session alone), its steps' records, the
 * status the frontend sees and the methods it may switch to.
 */
@Injectable()
export class JourneyState {
  constructor(
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly records: SessionRecordRepository,
    private readonly refresher: SessionRefresher,
    private readonly policy: OrchestrationPolicy,
    private readonly prices: PriceBook,
    private readonly balance: VerificationBalanceWatch,
    @Inject(RESOLVED_VERIFICATION_OPTIONS) options: ResolvedVerificationOptions,
  ) {
    this.purposes = options.purposes;
  }

  /** The purposes' policies: a journey's switches stay among its purpose's methods. */
  private readonly purposes: ResolvedPurposes;

  /**
   * The journey a handle opened to. A current session the store lost is rebuilt from the API
   * (404 `not_found` when the API does not know it; see SessionRefresher.recover). That upstream read
   * takes one of the caller's metered reads (`mayRead`, as a refresh does): refused, nothing is read
   * and the journey is answered as stored, that is unknown (404 `not_found`), unless the meter throws
   * its own refusal.
   */
  async load(
    journeyId: string,
    owner: string | undefined,
    mayRead?: () => Promise<boolean>,
  ): Promise<LoadedJourney> {
    const [journey, first] = await this.readBoth(journeyId);
    // Nearly every verification is one method with no journey record: answered from the one record read.
    if (!journey)
      return first ? alone(first, false) : alone(await this.require(journeyId, owner, mayRead), true);
    const stored = await this.withSteps(journey, first);
    if (stored) return stored;
    const current = await this.require(currentStep(journey).requestId, owner, mayRead);
    const records = await this.stepRecords(journey, first);
    records[records.length - 1] = current;
    return { journey, records, current, recovered: true };
  }

  /**
   * A lost record rebuilt for the client routes, or 404 `not_found` when the API does not know the
   * session; an upstream failure is logged for the operator and answered as the routes answer it (503).
   */
  private async require(
    requestId: string,
    owner: string | undefined,
    mayRead: (() => Promise<boolean>) | undefined,
  ): Promise<SessionRecord> {
    if (mayRead !== undefined) {
      // A handle the API was found not to know answers from the store: it takes no metered read.
      if (await this.refresher.knownUnknown(requestId)) throw new VerificationClientError('not_found');
      if (!(await mayRead())) throw new VerificationClientError('not_found');
    }
    let record: SessionRecord | null;
    try {
      record = await this.refresher.recover(requestId, owner);
    } catch (error) {
      throw await upstreamClientError(error, this.balance);
    }
    if (!record) throw new VerificationClientError('not_found');
    return record;
  }

  /**
   * Puts back the journey record a store lost, from the steps a frontend's `journey_token` carries
   * (the handle seals only the first step): each step's record is rebuilt from the API as a handle's
   * would be (followed by the reconciler, its outcome emitted once), so after a restart the status
   * and check go to the current step, an earlier step's verification counts, and the journey's steps
   * and money count against `maxSteps` and `maxCost`. A journey the store still holds is left as
   * it is (the store is the truth; a token may be older than the journey).
   */
  async adopt(carried: CarriedJourney, owner: string | undefined): Promise<void> {
    if (carried.steps.length < 2 || (await this.records.getJourney(carried.journeyId)) !== null) return;
    const records: (SessionRecord | null)[] = [];
    for (const step of carried.steps)
      records.push(
        (await this.records.get(step.requestId)) ??
          (await this.refresher.recover(step.requestId, owner, carried.journeyId)),
      );
    const known = records.filter((record): record is SessionRecord => record !== null);
    const current = records[records.length - 1];
    if (known.length === 0) return;
    const journey: JourneyRecord = {
      journeyId: carried.journeyId,
      phoneNumber: known[0]!.phoneNumber,
      ...(carried.device === undefined ? {} : { device: carried.device }),
      steps: carried.steps,
      createdAt: carried.steps[0]!.startedAt,
    };
    const expiresAt = current?.expiresAt ?? currentStep(journey).startedAt + MAX_SESSION_TTL_MS;
    await this.records.saveJourneyIfAbsent(journey, expiresAt);
  }

  /** The journey as the store holds it, or null when its current session's record is not there. */
  async read(journeyId: string): Promise<LoadedJourney | null> {
    const [journey, first] = await this.readBoth(journeyId);
    return journey ? this.withSteps(journey, first) : first && alone(first, false);
  }

  /** The session as the API sees it now; as recorded when the API cannot be asked. */
  async readNowQuietly(record: SessionRecord): Promise<SessionRecord> {
    try {
      return await this.refresher.readNow(record);
    } catch {
      return record;
    }
  }

  /** The journey with a fresher record of its current session. */
  withCurrent(loaded: LoadedJourney, current: SessionRecord): LoadedJourney {
    if (current === loaded.current) return loaded;
    const records = [...loaded.records];
    records[records.length - 1] = current;
    return { ...loaded, records, current };
  }

  /** The journey's status and where it may go from here. */
  async options(loaded: LoadedJourney): Promise<JourneyOptions> {
    const { status } = answeringSession(loaded.journey, loaded.records, loaded.current);
    return await this.optionsAt(this.currentPlan() ?? (await this.freshPlan()), loaded, status);
  }

  /** The status answer for the journey (the status route's and the status stream's). */
  async view(verificationId: string, loaded: LoadedJourney): Promise<StatusView> {
    const { status, record } = answeringSession(loaded.journey, loaded.records, loaded.current);
    const plan = this.currentPlan() ?? (await this.freshPlan());
    const { switchable } = await this.optionsAt(plan, loaded, status);
    const fallbackAt = fallbackAvailableAt({
      status,
      current: loaded.current,
      step: currentStep(loaded.journey),
      timeoutMs: await this.fallbackAfterMs(loaded),
      hasCandidate: switchable.length > 0,
      now: this.store.now(),
    });
    return toStatusView(verificationId, record, {
      status,
      methodsTried: methodsTried(loaded.journey),
      switchMethods: switchable,
      fallbackAvailableAt: fallbackAt,
    });
  }

  /**
   * What a switch of the journey may do now (`named`: the method asked for, or the policy's next),
   * and the methods it has left in the policy's order.
   */
  async switchFor(
    loaded: LoadedJourney,
    named: string | undefined,
  ): Promise<{
    decision: ReturnType<typeof decideSwitch>;
    remaining: KnownVerificationMethod[];
    retriable: KnownVerificationMethod[];
  }> {
    const options = await this.options(loaded);
    const decision = decideSwitch({
      journey: loaded.journey,
      status: options.status,
      current: loaded.current,
      remaining: options.remaining,
      named,
      retriable: options.retriable,
      priceMinor: options.priceOf,
      spentMinor: options.spentMinor,
      maxSteps: this.maxSteps(loaded),
      maxCostMinor: this.policy.maxCostMinor,
      timeoutMs: await this.fallbackAfterMs(loaded),
      skippable: this.policy.skippable(loaded.current.method),
      now: this.store.now(),
    });
    return { decision, remaining: options.remaining, retriable: options.retriable };
  }

  /** A new journey's device hint, kept on its one-step journey record for its switches. */
  async rememberDevice(record: SessionRecord, device: DeviceHint): Promise<void> {
    await this.records.saveJourney(oneStepJourney(record, device), record.expiresAt);
  }

  /** The session an identical start may resume: pending, and of a journey that was not canceled. */
  async resumable(requestId: string): Promise<SessionRecord | null> {
    const record = await this.records.get(requestId);
    if (!record || isTerminal(record.status) || record.expiresAt <= this.store.now()) return null;
    const journey = await this.records.getJourney(record.journeyId ?? record.requestId);
    if (journey?.canceledAt !== undefined) return null;
    return record;
  }

  /**
   * The steps the journey may take: none beyond those it has when a step's record was rebuilt after
   * the store lost it (a restart on MemoryStore), since the steps taken before are then only what
   * the frontend says (an older `journey_token`, or none); else `orchestration.maxSteps`.
   */
  private maxSteps(loaded: LoadedJourney): number {
    const rebuilt = loaded.records.some((record) => record?.rebuilt === true);
    return rebuilt ? Math.min(loaded.journey.steps.length, this.policy.maxSteps) : this.policy.maxSteps;
  }

  /** When the journey's current step may fall back, ms after its start (the policy's, FallbackTiming). */
  fallbackAfterMs(loaded: LoadedJourney): Promise<number> {
    const { journey } = loaded;
    return this.policy.fallbackAfterMs(currentStep(journey), journey.phoneNumber, journey.device);
  }

  /**
   * The policy's plan of the offered methods as last worked out, while it stands (as on nearly every
   * status poll: it changes with the price list), taken without waiting; else undefined.
   */
  private currentPlan(): MethodPlan | undefined {
    return this.policy.currentPlan(this.prices.offeredNow());
  }

  private async freshPlan(): Promise<MethodPlan> {
    return this.policy.plan(await this.prices.offered());
  }

  private async optionsAt(
    { order: planned, priceOf }: MethodPlan,
    loaded: LoadedJourney,
    status: JourneyStatus,
  ): Promise<JourneyOptions> {
    const spentMinor = journeyExposureMinor(loaded.records, chargedCost);
    // A journey moves only among the methods its purpose allows; those demoted on its prefix last.
    const order = await this.policy.switchOrder(
      methodsForPurpose(this.purposes, loaded.current.purpose, planned),
      loaded.current.phoneNumber,
    );
    const remaining = remainingMethods(order, loaded.journey, this.policy.exclude);
    const switchable = switchableMethods({
      journey: loaded.journey,
      status,
      remaining,
      priceMinor: priceOf,
      spentMinor,
      maxSteps: this.maxSteps(loaded),
      maxCostMinor: this.policy.maxCostMinor,
    });
    const retriable = retriableMethods(order, loaded.journey, this.policy.exclude);
    return { status, remaining, retriable, switchable, priceOf, spentMinor };
  }

  /** The journey record and its first session's record, in one round trip's time. */
  private readBoth(journeyId: string): Promise<[JourneyRecord | null, SessionRecord | null]> {
    return Promise.all([this.records.getJourney(journeyId), this.records.get(journeyId)]);
  }

  /** A journey with a record: its steps' records read; null when its current session's record is not there. */
  private async withSteps(
    journey: JourneyRecord,
    first: SessionRecord | null,
  ): Promise<LoadedJourney | null> {
    const records = await this.stepRecords(journey, first);
    const current = records[records.length - 1];
    return current ? { journey, records, current, recovered: false } : null;
  }

  /** Every step's record (the first one as already read), in step order. */
  private stepRecords(
    journey: JourneyRecord,
    first: SessionRecord | null,
  ): Promise<(SessionRecord | null)[]> {
    return Promise.all(
      journey.steps.map((step) =>
        step.requestId === journey.journeyId && first !== null ? first : this.records.get(step.requestId),
      ),
    );
  }
}

/** A first session without a journey record: a journey of its own (one step). */
function alone(first: SessionRecord, recovered: boolean): LoadedJourney {
  return { journey: oneStepJourney(first), records: [first], current: first, recovered };
}

import { Inject, Injectable } from '@nestjs/common';
import { PriceBook } from '../account/price-book.js';
import {
  STATUS_READS_PER_CALLER,
  StatusReadMeter,
  type UpstreamRead,
} from '../protection/status-read-meter.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import { methodTraits, pollIntervalMs } from '../core/verification-method.js';
import { answeringSession } from '../core/journey.js';
import { isTestSession } from '../core/test-session.js';
import type { SessionRecord } from '../core/session-record.js';
import { isTerminal } from '../core/verification-status.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { SessionRefresher } from '../sessions/session-refresher.js';
import { VerificationListenerError } from '../sessions/verification.tracker.js';
import { FlowOutcomes } from './flow-outcomes.js';
import { JourneyHandles } from './journey-handles.js';
import { JourneyState, type LoadedJourney } from './journey-state.js';
import type { MethodView, StatusView, VerifiedFacts } from './verification.views.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { methodsForPurpose } from '../options/purposes.options.js';
import { startPurpose } from './client-refusals.js';

/**
 * What a frontend or host reads: a journey's status (fresh within one poll interval), the methods
 * offered, and the verified number behind a handle (asked from the API, never trusted from a frontend).
 */
@Injectable()
export class StatusFlow {
  constructor(
    private readonly journeyState: JourneyState,
    private readonly handles: JourneyHandles,
    private readonly refresher: SessionRefresher,
    private readonly records: SessionRecordRepository,
    private readonly prices: PriceBook,
    private readonly outcomes: FlowOutcomes,
    private readonly meter: StatusReadMeter,
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
  ) {}

  /**
   * The journey's status answer, with its `journeyToken` once it has more than one step. A read of its
   * own upstream takes one of the caller's metered reads (`from`: its request, for its client key).
   */
  async status(
    verificationId: string,
    owner?: string,
    journeyToken?: string,
    from?: { request?: unknown; ip?: string },
  ): Promise<StatusView> {
    try {
      const began = Date.now();
      const journeyId = await this.handles.openCarrying(verificationId, owner, journeyToken);
      const mayRead = (read: UpstreamRead) => () => this.meter.take(owner, from, read);
      // A lost record's rebuild is metered too (see `takeUpstreamRead`); past the meter the page is told to come back.
      const stored = await this.journeyState.load(journeyId, owner, async () => {
        if (await mayRead('rebuild')()) return true;
        throw new VerificationClientError(
          'rate_limit_exceeded',
          'Too many status reads, try again later',
          {},
          Math.ceil(STATUS_READS_PER_CALLER.windowMs / 1000),
        );
      });
      // A caller this instance found past its meter is answered as stored, asking the store nothing more.
      const loaded = this.meter.spent(owner, from, 'refresh')
        ? stored
        : await this.refreshed(stored, mayRead('refresh'));
      this.outcomes.telemetry.statusServed(loaded.current, Date.now() - began);
      await this.outcomes.followed(loaded.current);
      return {
        ...(await this.journeyState.view(verificationId, loaded)),
        ...this.handles.token(loaded.journey, owner),
      };
    } catch (error) {
      throw this.outcomes.failed('status', error);
    }
  }

  /**
   * The journey a handle names, its current session fresh within one poll interval (a record the
   * store lost is rebuilt from the API: that read is this call's fresh one). A canceled journey is
   * not asked about: nothing more is polled for it. A switched-away session is read as stored.
   */
  async fresh(journeyId: string, owner: string | undefined): Promise<LoadedJourney> {
    return this.refreshed(await this.journeyState.load(journeyId, owner));
  }

  /** A journey as stored (no upstream read) and its status answer, or null: what a status stream pushes after a change. */
  async stored(journeyId: string): Promise<{ loaded: LoadedJourney; view: StatusView } | null> {
    const loaded = await this.journeyState.read(journeyId);
    return loaded ? { loaded, view: await this.journeyState.view('', loaded) } : null;
  }

  /**
   * A status stream's look at a journey it follows: as stored (a record the store lost is not rebuilt:
   * null), its current session refreshed by the status route's rule (`refreshed`) when `needsLooking`
   * says nobody else would observe its next change.
   */
  async followed(
    journeyId: string,
    needsLooking: (record: SessionRecord) => boolean,
  ): Promise<LoadedJourney | null> {
    const loaded = await this.journeyState.read(journeyId);
    return loaded && needsLooking(loaded.current) ? this.refreshed(loaded) : loaded;
  }

  /**
   * The one rule of a status read (the route, a switch, the guard, a stream's look): the current session
   * fresh within one poll interval, shared; a canceled journey or a just rebuilt record as it is; an
   * upstream failure answered with the last known record (404 `not_found` when the API lost the session).
   */
  private async refreshed(loaded: LoadedJourney, mayRead?: () => Promise<boolean>): Promise<LoadedJourney> {
    if (loaded.recovered || loaded.journey.canceledAt !== undefined) return loaded;
    const record = loaded.current;
    try {
      return this.journeyState.withCurrent(loaded, await this.refresher.refresh(record, 'poll', mayRead));
    } catch (error) {
      // The last known state keeps the page alive; the reconciler and webhooks catch up.
      if (error instanceof VerificationApiError && error.status === 404)
        throw new VerificationClientError('not_found');
      if (!(error instanceof VerificationListenerError))
        this.outcomes.telemetry.statusServedStale(record, error);
      return this.journeyState.withCurrent(loaded, (await this.records.get(record.requestId)) ?? record);
    }
  }

  /**
   * The methods this deployment offers to frontends (see PriceBook.offered); with a `purpose`, only
   * those a start of it may use, refused as a start's `purpose` is (400 `validation_error`,
   * `purpose_not_allowed`) before anything is read.
   */
  async methods(purpose?: unknown): Promise<MethodView[]> {
    const named = startPurpose(purpose, this.options.purposes);
    const offered = methodsForPurpose(this.options.purposes, named, await this.prices.offered());
    return offered.map((method) => ({
      method,
      codeEntry: methodTraits(method).codeEntry,
      pollIntervalMs: pollIntervalMs(method),
    }));
  }

  /**
   * The verified E.164 number behind a handle, or null: any method of the journey may have verified
   * it (the newest is asked first); a canceled journey answers null.
   */
  async verifiedPhone(verificationId: string, owner?: string, journeyToken?: string): Promise<string | null> {
    try {
      const journeyId = this.handles.tryOpen(verificationId, owner);
      if (journeyId === null) return null;
      await this.handles.adopt(journeyId, owner, journeyToken);
      const journey = await this.records.getJourney(journeyId);
      // A canceled journey is over for its frontend, whatever arrived late.
      if (journey?.canceledAt !== undefined) return null;
      const steps = journey ? [...journey.steps].reverse() : [{ requestId: journeyId }];
      for (const { requestId } of steps) {
        const verified = await this.verifiedRecordOf(requestId, owner);
        if (verified !== null) return (await this.revoked(verified, owner)) ? null : verified.phoneNumber;
      }
      return null;
    } catch (error) {
      throw this.outcomes.failed('getVerifiedPhone', error);
    }
  }

  /**
   * One session's record once verified, else null. A session seen verified is terminal: answered from
   * its record; a pending one is read through the refresher (one GET per session per poll interval, shared).
   */
  private async verifiedRecordOf(
    requestId: string,
    owner: string | undefined,
  ): Promise<SessionRecord | null> {
    const record = await this.records.get(requestId);
    const observed = record
      ? await this.refresher.refresh(record, 'poll')
      : await this.refresher.recover(requestId, owner);
    return observed?.status === 'verified' ? observed : null;
  }

  /**
   * Whether a verified session no longer counts for `owner`: its number was taken off the owner's
   * account (a change of phone), or it or the owner erased, since it verified (or at an unknown time).
   */
  private async revoked(record: SessionRecord, owner: string | undefined): Promise<boolean> {
    const since = await this.records.subjects.forgottenAt(record.phoneNumber, owner);
    return since !== undefined && (record.verifiedAt === null || record.verifiedAt <= since);
  }

  /**
   * What VerifiedPhoneGuard decides on: the journey's status and, once a step verified it, that
   * step's number and time, from its record (terminal: no upstream read). A pending current step is
   * refreshed as the status route's (shared per poll interval); a read of its own only when `mayAsk()`
   * allows (the guard's per-owner meter), else read as stored.
   * 404 `not_found` for a handle that does not open for this owner.
   */
  async verifiedFacts(
    verificationId: string,
    owner: string | undefined,
    mayAsk: (read: UpstreamRead) => Promise<boolean>,
  ): Promise<VerifiedFacts> {
    try {
      const journeyId = this.handles.open(verificationId, owner);
      // A lost record's rebuild takes the guard's meter too; past it the journey is unknown (as stored).
      let loaded = await this.journeyState.load(journeyId, owner, () => mayAsk('rebuild'));
      if (answeringSession(loaded.journey, loaded.records, loaded.current).status !== 'verified')
        // The meter is asked only for a read of the guard's own (a read shared in its poll interval, or a
        // record just rebuilt, is free: see `refreshed`).
        if (!isTerminal(loaded.current.status))
          loaded = await this.refreshed(loaded, () => mayAsk('refresh'));
      const { status, record } = answeringSession(loaded.journey, loaded.records, loaded.current);
      const verified = status === 'verified';
      // A number taken off this owner's account since: as unknown as another owner's verification.
      if (verified && (await this.revoked(record, owner))) throw new VerificationClientError('not_found');
      return {
        status,
        phoneNumber: verified ? record.phoneNumber : null,
        verifiedAt: verified && record.verifiedAt !== null ? new Date(record.verifiedAt) : null,
        test: isTestSession(record.requestId),
        ...(record.purpose === undefined ? {} : { purpose: record.purpose }),
      };
    } catch (error) {
      throw this.outcomes.failed('getVerifiedPhone', error);
    }
  }

  /**
   * The journey with each pending step's record read fresh from the API (not through the poll
   * coalescing: an outcome of the last second decides whether a cancel may go through). A step that
   * could not be read keeps its record and stays in the reconciler's queue.
   */
  async readPendingNow(loaded: LoadedJourney): Promise<LoadedJourney> {
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

import { PhoneVerificationError } from '../core/phone-verification.error.js';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { isTestSession } from '../core/test-session.js';
import type { VerificationSession } from '../api/api.types.js';
import {
  VerificationEventName,
  type VerificationEvent,
  type VerificationEventSource,
  type VerificationEventType,
} from '../core/verification-events.js';
import { methodTraits } from '../core/verification-method.js';
import { isTerminal, terminalEvent } from '../core/verification-status.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { keepClaim, releaseClaim, takeClaim } from '../store/store-claim.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from './session-record.repository.js';
import {
  chargedCost,
  newSessionRecord,
  owesCodeRequired,
  sameRecord,
  showsDelivery,
  type SessionRecord,
} from '../core/session-record.js';
import { MethodStats } from '../account/method-stats.service.js';
import { VerificationLedger } from '../ledger/verification-ledger.service.js';
import { journeyCost, methodsTried } from '../core/journey.js';
import { VerificationHandleCodec } from '../core/verification-handle.codec.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';

/** Thrown when a listener rejected: the event's claim was released so it comes again. */
export class VerificationListenerError extends PhoneVerificationError {
  constructor(
    readonly event: VerificationEventType,
    readonly requestId: string,
  ) {
    super(`A listener of ${event} failed; the event will be delivered again`);
  }
}

/**
 * How long an emission's claim lasts unless its instance renews it (EMIT_HOLD_MAX_MS) while its listeners
 * run: a process that died mid-emission must not swallow the event for good, and another instance emits it
 * a lease later. At-least-once: a listener slower than EMIT_HOLD_MAX_MS can see the event twice.
 */
export const EMIT_LEASE_MS = 60_000;
/**
 * How long a live instance keeps an event's claim while its listeners run (the lease renewed): a slow listener
 * is not raced by another instance's emission; a listener that never returns holds its event no longer.
 */
export const EMIT_HOLD_MAX_MS = 15 * 60_000;
const CLAIM_DONE = 'done';

/** What became of one due event in this call. */
type Emission = 'emitted' | 'done' | 'busy';

/** What `emitDue` did: the events emitted by this call, and whether the session is now settled. */
export interface EmitSummary {
  emitted: VerificationEventType[];
  /** Terminal, and every due event was emitted (by this call or before). */
  settled: boolean;
}

/**
 * Every observation of a session (webhook, status poll, check answer, reconciler) comes here.
 * The tracker merges what was seen into the session record and emits each newly due
 * `(request_id, event)` once per deployment: the event is claimed in the store (set-if-absent,
 * with a lease) before it is emitted, marked done once every listener resolved, and released
 * when a listener rejects, so that it comes again (webhook retry or reconciler).
 */
@Injectable()
export class VerificationTracker {
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly records: SessionRecordRepository,
    private readonly telemetry: VerificationTelemetry,
    /** Names each event by its journey's handle, as the frontend holds it. */
    private readonly handles: VerificationHandleCodec,
    @Optional() private readonly emitter?: EventEmitter2,
    @Optional() private readonly stats?: MethodStats,
    @Optional() private readonly ledger?: VerificationLedger,
  ) {
    if (!emitter)
      throw new PhoneVerificationError(
        'VerificationModule needs @nestjs/event-emitter: add EventEmitterModule.forRoot() to the imports of your AppModule',
      );
  }

  static claimKey(requestId: string, event: VerificationEventType): string {
    return `event:{${requestId}}:${event}`;
  }

  /** The journey's `verification.verified` claim: which of its steps verified it first (at most one event). */
  static journeyVerifiedKey(journeyId: string): string {
    return `journey-verified:{${journeyId}}`;
  }

  /**
   * Merges the API's view of a session into its record and emits what became due.
   * Returns the merged record. Rejects with VerificationListenerError when a listener failed.
   */
  async observe(
    session: VerificationSession,
    source: VerificationEventSource,
    known?: SessionRecord | null,
  ): Promise<SessionRecord> {
    // A pending `known` is read again: a concurrent observer may have stored a newer state since.
    const stored =
      known === undefined || (known !== null && !isTerminal(known.status))
        ? await this.records.getSince(session.requestId, known)
        : null;
    const base = stored ?? known ?? null;
    const merged = merge(base, session, this.store.now());
    // The usual pending poll changes nothing: the record stays the one read, nothing is written, and
    // nothing announced to streams.
    const changed = base === null || !sameRecord(merged, base);
    const record = changed ? merged : base;
    // An erased session is dropped: nothing of it is counted, emitted or announced.
    if (changed && !(await this.records.save(record))) return record;
    if (changed) await this.ledger?.count(record);
    // The method figures count a delivery when it is first seen. A terminal record's delivery is
    // counted with its outcome, by whoever claims the outcome's event (one tally, not two).
    if (changed && record.delivered && !base?.delivered && !isTerminal(record.status))
      await this.stats?.tally(record);
    try {
      // A pending session owing no event (the usual poll) has nothing to emit and nothing to settle.
      if (dueEvents(record).length > 0) await this.emitDue(record, source);
    } finally {
      // Announced after the host's listeners ran, so a browser told "verified" finds the host done.
      if (changed) await this.records.announce(record.requestId);
    }
    return record;
  }

  /** Whether the session was erased (VerificationErasure): nothing more of it is recorded or emitted. */
  wasErased(requestId: string): Promise<boolean> {
    return this.records.isErased(requestId);
  }

  /**
   * `observe` on a frontend's behalf: a failing host listener must not fail the frontend's
   * request (the event comes again), so it answers with the record as stored.
   */
  async observeQuietly(
    session: VerificationSession,
    source: 'check' | 'poll',
    record: SessionRecord,
  ): Promise<SessionRecord> {
    try {
      return await this.observe(session, source, record);
    } catch (error) {
      if (error instanceof VerificationListenerError)
        return (await this.records.get(record.requestId)) ?? record;
      throw error;
    }
  }

  /**
   * Emits every event the record's state calls for that was not emitted yet, in order
   * (`code_required` before the terminal event). A terminal session whose events are all emitted
   * leaves the reconciler's queue; one whose listener failed stays in it (retried one interval
   * later). Rejects with the first VerificationListenerError after trying every due event.
   */
  async emitDue(record: SessionRecord, source: VerificationEventSource): Promise<EmitSummary> {
    const due = dueEvents(record);
    const terminal = terminalEvent(record.status);

    const emitted: VerificationEventType[] = [];
    let failure: VerificationListenerError | undefined;
    let settled = terminal !== undefined;
    for (const event of due) {
      try {
        const emission = await this.emitOnce(record, event, source);
        if (emission === 'busy') settled = false;
        if (emission === 'emitted') emitted.push(event);
      } catch (error) {
        if (!(error instanceof VerificationListenerError)) throw error;
        failure ??= error;
        settled = false;
      }
    }
    if (settled) await this.records.queue.release(record.requestId);
    else if (failure || terminal) await this.records.queue.retryLater(record); // owed: look again later
    if (failure) throw failure;
    return { emitted, settled };
  }

  private async emitOnce(
    record: SessionRecord,
    event: VerificationEventType,
    source: VerificationEventSource,
  ): Promise<Emission> {
    const key = VerificationTracker.claimKey(record.requestId, event);
    const claim = await takeClaim(this.store, key, EMIT_LEASE_MS, 'emitting:');
    if (claim === null) return (await this.store.get(key)) === CLAIM_DONE ? 'done' : 'busy';
    // Whoever holds the outcome's claim counts it (once per session: the figures claim their own),
    // before the listeners run, so a failing listener does not hold the figures back.
    if (event === terminalEvent(record.status)) await this.stats?.tally(record);
    const journeyId = record.journeyId ?? record.requestId;
    const retention = Math.max(record.expiresAt - this.store.now(), 0) + RECORD_RETENTION_MS;
    let journey: Pick<VerificationEvent, 'methodsTried' | 'journeyCost'>;
    let name: VerificationEventType = event;
    let journeyClaim: string | undefined;
    try {
      if (event === VerificationEventName.verified) {
        journeyClaim = VerificationTracker.journeyVerifiedKey(journeyId);
        // Atomic across instances: the first verified step of the journey takes it.
        if (!(await this.store.setIfAbsent(journeyClaim, record.requestId, retention))) {
          if ((await this.store.get(journeyClaim)) !== record.requestId)
            name = VerificationEventName.verifiedAgain;
          journeyClaim = undefined;
        }
      }
      journey = await this.journeyFacts(record);
    } catch (error) {
      // The store failed between the claim and the emission: the event is not swallowed for a lease.
      await releaseClaim(this.store, claim).catch(() => undefined);
      if (journeyClaim) await this.store.delete(journeyClaim).catch(() => undefined);
      throw error;
    }
    const payload: VerificationEvent = {
      event: name,
      verificationId: this.handles.seal(journeyId, record.owner),
      requestId: record.requestId,
      phoneNumber: record.phoneNumber,
      method: record.method,
      status: record.status,
      verifiedAt: record.verifiedAt === null ? null : new Date(record.verifiedAt),
      expiresAt: new Date(record.expiresAt),
      owner: record.owner,
      ...(record.purpose === undefined ? {} : { purpose: record.purpose }),
      ...(record.assessment === undefined ? {} : { assessment: { ...record.assessment } }),
      source,
      ...journey,
      ...(isTestSession(record.requestId) ? { test: true as const } : {}),
      ...(this.options.name === undefined ? {} : { registration: this.options.name }),
    };
    const kept = keepClaim(this.store, claim, EMIT_LEASE_MS, EMIT_HOLD_MAX_MS);
    try {
      await this.emitter!.emitAsync(name, payload);
    } catch (error) {
      // Not another instance's, which took over once this listener outlived the claim.
      await releaseClaim(this.store, await kept.stop());
      // The journey's verified event was not delivered: whichever step comes again delivers it.
      if (journeyClaim) await this.store.delete(journeyClaim).catch(() => undefined);
      this.telemetry.logger.warn('listener failed; claim released for redelivery', {
        event,
        request_id: record.requestId,
        // The name only: a host listener's message is the host's data, which the module cannot vouch for.
        error: (error as Error)?.name ?? 'Error',
      });
      throw new VerificationListenerError(event, record.requestId);
    }
    await kept.stop();
    await this.store.set(key, CLAIM_DONE, retention);
    return 'emitted';
  }

  /**
   * The journey the session is a step of, as its events tell it: the methods tried and the money
   * charged for them. A session without a journey record is a journey of its own.
   */
  private async journeyFacts(
    record: SessionRecord,
  ): Promise<Pick<VerificationEvent, 'methodsTried' | 'journeyCost'>> {
    const journey = await this.records.getJourney(record.journeyId ?? record.requestId);
    if (!journey) return { methodsTried: [record.method], journeyCost: journeyCost([record], chargedCost) };
    const records = await Promise.all(
      journey.steps.map((step) =>
        step.requestId === record.requestId ? record : this.records.get(step.requestId),
      ),
    );
    return { methodsTried: methodsTried(journey), journeyCost: journeyCost(records, chargedCost) };
  }
}

/** The events a record's state calls for, in order (`code_required` first). */
function dueEvents(record: SessionRecord): VerificationEventType[] {
  const due: VerificationEventType[] = owesCodeRequired(record) ? [VerificationEventName.codeRequired] : [];
  const terminal = terminalEvent(record.status);
  if (terminal) due.push(terminal);
  return due;
}

function merge(previous: SessionRecord | null, session: VerificationSession, now: number): SessionRecord {
  // No record yet: the session as the API shows it (an end it does not state counts as now).
  const base: SessionRecord = previous
    ? { ...previous }
    : newSessionRecord(session, { createdAt: now, ttlMs: 0, as: 'answer' });
  // A terminal state is final: a late or reordered observation never moves a session back, and a
  // code request seen only after the outcome is moot (code_required is not emitted after the fact).
  if (isTerminal(base.status)) {
    if (session.status === base.status && session.verifiedAt && base.verifiedAt === null)
      base.verifiedAt = session.verifiedAt.getTime();
    return base;
  }
  base.status = session.status;
  if (showsDelivery(base.method, session.status)) base.delivered = true;
  if (session.awaitingCode !== undefined) base.awaitingCode = session.awaitingCode;
  // Without the API's time, the first time the module saw it verified (never "now" at each read).
  if (session.verifiedAt) base.verifiedAt = session.verifiedAt.getTime();
  else if (session.status === 'verified' && base.verifiedAt === null) base.verifiedAt = now;
  if (session.expiresAt) base.expiresAt = session.expiresAt.getTime();
  if (session.cost) base.cost = session.cost;
  // A code request the API announces (operator_id's fallback) is remembered: code_required is then due.
  if (
    methodTraits(base.method).codeRequestAnnounced &&
    session.awaitingCode === true &&
    !isTerminal(session.status)
  )
    base.fallback = true;
  return base;
}

import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { VerificationSession } from '../api/api.types.js';
import {
  VerificationEventName,
  type VerificationEvent,
  type VerificationEventSource,
  type VerificationEventType,
} from '../events/verification-events.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from './session-record.repository.js';
import { isTerminal, type SessionRecord } from './session-record.js';

/** Thrown when a listener rejected: the event's claim was released so it comes again. */
export class VerificationListenerError extends Error {
  constructor(
    readonly event: VerificationEventType,
    readonly requestId: string,
  ) {
    super(`A listener of ${event} failed; the event will be delivered again`);
    this.name = 'VerificationListenerError';
  }
}

/**
 * Every observation of a session (webhook, status poll, check answer, reconciler) comes here.
 * The tracker merges what was seen into the session record and emits each newly due
 * `(request_id, event)` once per deployment: the event is claimed in the store (set-if-absent)
 * before it is emitted, and the claim is released when a listener rejects.
 */
@Injectable()
export class VerificationTracker {
  private readonly logger = new Logger('VerificationTracker');

  constructor(
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly records: SessionRecordRepository,
    @Optional() private readonly emitter?: EventEmitter2,
  ) {
    if (!emitter)
      throw new Error(
        'VerificationModule needs @nestjs/event-emitter: add EventEmitterModule.forRoot() to the imports of your AppModule',
      );
  }

  static claimKey(requestId: string, event: VerificationEventType): string {
    return `event:{${requestId}}:${event}`;
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
    const previous = known === undefined ? await this.records.get(session.requestId) : known;
    const record = merge(previous, session, this.store.now());
    if (changed(previous, record)) await this.records.save(record);
    await this.emitDue(record, source);
    return record;
  }

  /** Emits every event the record's state calls for that was not emitted yet. */
  async emitDue(record: SessionRecord, source: VerificationEventSource): Promise<void> {
    if (record.method === 'operator_id' && (record.awaitingCode || hadFallback(record))) {
      await this.emitOnce(record, VerificationEventName.codeRequired, source);
    }
    const terminal = terminalEvent(record.status);
    if (terminal) await this.emitOnce(record, terminal, source);
  }

  private async emitOnce(
    record: SessionRecord,
    event: VerificationEventType,
    source: VerificationEventSource,
  ) {
    const key = VerificationTracker.claimKey(record.requestId, event);
    const ttl = Math.max(record.expiresAt - this.store.now(), 0) + RECORD_RETENTION_MS;
    if (!(await this.store.setIfAbsent(key, String(this.store.now()), ttl))) return;
    const payload: VerificationEvent = {
      event,
      requestId: record.requestId,
      phoneNumber: record.phoneNumber,
      method: record.method,
      status: record.status,
      verifiedAt: record.verifiedAt === null ? null : new Date(record.verifiedAt),
      expiresAt: new Date(record.expiresAt),
      owner: record.owner,
      source,
    };
    try {
      await this.emitter!.emitAsync(event, payload);
    } catch (error) {
      await this.store.delete(key);
      this.logger.warn(
        `listener of ${event} failed (${(error as Error)?.name ?? 'Error'}); claim released for redelivery`,
      );
      throw new VerificationListenerError(event, record.requestId);
    }
  }
}

function terminalEvent(status: string): VerificationEventType | undefined {
  switch (status) {
    case 'verified':
      return VerificationEventName.verified;
    case 'failed':
      return VerificationEventName.failed;
    case 'expired':
      return VerificationEventName.expired;
    default:
      return undefined;
  }
}

/** An operator_id session whose record once showed the SMS fallback keeps that fact. */
function hadFallback(record: SessionRecord): boolean {
  return record.fallback === true;
}

function merge(previous: SessionRecord | null, session: VerificationSession, now: number): SessionRecord {
  const base: SessionRecord = previous
    ? { ...previous }
    : {
        requestId: session.requestId,
        phoneNumber: session.phoneNumber,
        method: session.method,
        status: session.status,
        awaitingCode: session.awaitingCode ?? false,
        createdAt: session.createdAt?.getTime() ?? now,
        expiresAt: session.expiresAt?.getTime() ?? now,
        verifiedAt: null,
        cost: session.cost,
      };
  // A terminal state is final: a late or reordered observation never moves a session back.
  if (!isTerminal(base.status) || isTerminal(session.status)) {
    if (!isTerminal(base.status)) base.status = session.status;
    if (session.awaitingCode !== undefined) base.awaitingCode = session.awaitingCode;
    if (session.verifiedAt) base.verifiedAt = session.verifiedAt.getTime();
    if (session.expiresAt) base.expiresAt = session.expiresAt.getTime();
    if (session.cost) base.cost = session.cost;
  }
  if (base.method === 'operator_id' && session.awaitingCode) base.fallback = true;
  return base;
}

function changed(previous: SessionRecord | null, next: SessionRecord): boolean {
  return previous === null || JSON.stringify(previous) !== JSON.stringify(next);
}

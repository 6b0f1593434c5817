import { Inject, Injectable } from '@nestjs/common';
import { sessionEvidenceKeys } from '../account/figure-evidence.keys.js';
import { MAX_SESSION_TTL_MS, type SessionRecord } from '../core/session-record.js';
import { isTerminal } from '../core/verification-status.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { VerificationHistory } from '../history/verification-history.service.js';
import { longestClaimTtlMs } from '../options/purposes.options.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { ProtectionKeys } from '../protection/protection-keys.js';
import { RangeStatsKeys as RangeStats } from '../pumping/range-stats-keys.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from '../sessions/session-record.repository.js';
import { SessionRefresher } from '../sessions/session-refresher.js';
import type { ErasureSubject } from '../core/erasure-marks.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { erasureCounterKeys } from './erasure-keys.js';
import { storedSessionId } from '../core/test-session.js';
import { testSessionKeys } from '../test-numbers/test-session-store.js';

/** Who to erase: one phone number (E.164) or one owner (`owner(req)`'s id). */
export interface ErasureRequest {
  /** The number, E.164 (`+79161234567`). */
  phoneNumber?: string;
  /** The id `owner(req)` answered for the person. */
  owner?: string;
}

/** What an erasure removed, by kind. */
export interface ErasureReport {
  /** Session records removed (each with its journey record and reconciler schedule). */
  sessions: number;
  /** Of those, sessions still pending: their handles and outcomes are dropped. */
  liveSessions: number;
  /** History entries of the subject's own ring (a number's in owners' rings go too; an owner's in numbers' rings stay without it). */
  historyEntries: number;
  /** Counters and claims keyed by the subject that were present (never a limit: see `erasureCounterKeys`). */
  counters: number;
}

const E164 = /^\+[1-9]\d{6,14}$/;
/** A claim never outlives this; the erasure mark is kept as long (and the longest record). */
const MARK_SLACK_MS = 60_000;

/**
 * The answer to a deletion request (152-FZ, GDPR): removes what the module keeps about one number
 * or one owner across every instance sharing the store: its sessions' and journeys' records (a
 * handle of them then answers 404, a claim issued before is refused by the guard), its history (an
 * owner's entries in a number's history stay, without the owner), its own counters (never a limit of
 * another giver or of a number) and the index that found them. The API has no cancel: a pending session is
 * dropped here (no outcome is emitted for it) and ends upstream at its TTL.
 */
@Injectable()
export class VerificationErasure {
  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly records: SessionRecordRepository,
    private readonly history: VerificationHistory,
  ) {}

  /** Erases one subject (exactly one of `phoneNumber`, `owner`); answers what it removed, by kind. */
  async forget(request: ErasureRequest): Promise<ErasureReport> {
    const subject = erasureSubject(request);
    const now = this.store.now();
    // Marked before the index is taken, for as long as any record or claim of the subject may live: a
    // start whose slot was reserved before the mark finds it changed when its record lands, whether the
    // take below read its slot or not; one reserved after it is the take's to find.
    const claimsMs = longestClaimTtlMs(this.options.purposes) + MARK_SLACK_MS;
    const markMs = Math.max(claimsMs, RECORD_RETENTION_MS + MAX_SESSION_TTL_MS);
    await this.records.subjects.markForgotten(subject, now, markMs);
    const { ids, callers } = await this.records.subjects.take(subject);
    const found = await Promise.all(ids.map((id) => this.records.get(id)));
    const records = found.filter((r) => r !== null);
    const keptMs = RECORD_RETENTION_MS + Math.max(0, ...records.map((r) => r.expiresAt - now));
    await Promise.all(ids.map((id, i) => this.forgetSession(id, keptMs, found[i] !== null)));
    // A number's leaving an owner's account (a change of phone) names both: the mark above covers it now.
    await this.records.subjects.forgetRevoked(
      records.flatMap((r) => (r.owner === undefined ? [] : [{ owner: r.owner, phoneNumber: r.phoneNumber }])),
    );
    const [historyEntries, counters] = await Promise.all([
      this.history.forget(subject),
      this.forgetCounters(subject, records, callers),
    ]);
    return {
      sessions: records.length,
      liveSessions: records.filter((r) => !isTerminal(r.status)).length,
      historyEntries,
      counters,
    };
  }

  /**
   * @internal Erases one session of the subject (`forget`, and a start that finds its subject erased while the API
   * was asked: PaidStart), for `keptMs`: its records, its handle (no instance rebuilds it from the API),
   * what the pumping defence, the free budget and the method figures remember of it, and a test session's entries (`stored`: a spare test
   * session's slot that a newer one took is the newer one's).
   */
  async forgetSession(id: string, keptMs: number, stored = true): Promise<void> {
    await this.records.erase(id, keptMs);
    // The rest is independent of each other: one round.
    const tests = storedSessionId(id) === id || stored ? testSessionKeys(id) : [];
    await Promise.all([
      this.store.set(SessionRefresher.unknownKey(id), 'forgotten', keptMs),
      ...[
        ...tests,
        RangeStats.sessionKey(id),
        ProtectionKeys.freeStartProof(id),
        ...sessionEvidenceKeys(id),
      ].map((key) => this.store.delete(key)),
    ]);
  }

  /** The counters named by the subject, its sessions' callers and numbers (see erasureCounterKeys). */
  private async forgetCounters(
    subject: ErasureSubject,
    records: SessionRecord[],
    callers: string[],
  ): Promise<number> {
    const names = erasureCounterKeys(this.options.dataKeys, {
      subject,
      records,
      callers,
      now: this.store.now(),
      pumping: this.options.limits.pumping,
    });
    const present = await Promise.all(names.map((key) => this.store.get(key)));
    await Promise.all(names.filter((_, i) => present[i] !== null).map((key) => this.store.delete(key)));
    return present.filter((v) => v !== null).length;
  }
}

/** The one subject of a request, or the module's validation error naming the field. */
export function erasureSubject(request: ErasureRequest): ErasureSubject {
  const { phoneNumber, owner } = (request ?? {}) as ErasureRequest;
  const invalid = (field: string, message: string) =>
    new VerificationClientError('validation_error', message, { errors: [{ field, message }] });
  if ((phoneNumber === undefined) === (owner === undefined))
    throw invalid('phoneNumber', 'give either phoneNumber (E.164) or owner');
  if (phoneNumber !== undefined) {
    if (typeof phoneNumber !== 'string' || !E164.test(phoneNumber))
      throw invalid('phoneNumber', 'must be a phone number in E.164 (+79161234567)');
    return { phoneNumber };
  }
  if (typeof owner !== 'string' || owner === '') throw invalid('owner', 'must be a non-empty string');
  return { owner };
}

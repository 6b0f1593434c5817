import { longestCallMs } from '../api/api-client.options.js';
import { Inject, Injectable } from '@nestjs/common';
import type { DataKeys } from '../core/data-keys.js';
import { errorText } from '../core/error-text.js';
import type { JourneyRecord } from '../core/journey.js';
import { restoredRecord, storedRecord, type SessionRecord } from '../core/session-record.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { LocalChannels } from '../store/local-channels.js';
import { storeBatch } from '../store/store-batch.js';
import { releaseClaim, renewClaim, takeClaim, type StoreClaim } from '../store/store-claim.js';
import { storedSessionId } from '../core/test-session.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { ReconcileQueue } from './reconcile-queue.js';
import { SubjectIndex, type IndexReservation } from './subject-index.js';

/** How long a record outlives its session: terminal states stay readable (and cached) this long. */
export const RECORD_RETENTION_MS = 24 * 3_600_000;

/** How long a step claim holds: longer than a paid start (hook, limits, API call); a crashed holder's ends soon. */
export const STEP_CLAIM_TTL_MS = 60_000;
/** A step claim outlives its paid start's POST (longestCallMs, when that is longer) by this: hook and limits. */
const STEP_CLAIM_MARGIN_MS = 30_000;

/** The store channel on which a changed session is announced, by its request id. */
export const SESSION_CHANGED_CHANNEL = 'session-changed';

/** What a stored record seals with the data key: a session's number and owner, a journey's number. */
type Sealable = { phoneNumber: string; owner?: string | undefined };

/**
 * The sessions' and journeys' records in the store, the announcements that one changed, and the
 * reconciler's schedule of the sessions still followed (`queue`, a ReconcileQueue it makes): the one
 * owner of those keys. A hash tag keeps one session's keys on one Redis Cluster slot; a journey's
 * keys carry its first session's, so a journey and its first session share a slot. A journey without
 * a record is its first session alone: a journey record is written only once the journey holds more
 * than that (a device hint, a second step, a cancel).
 *
 * A change is announced to every instance sharing the store, so that the one holding a status stream
 * of it reads the record and pushes the new status. Only the request id travels (never the number or
 * anything else of the record). A host's own store without publish/subscribe gets an in-process
 * channel: its changes then reach only the streams of the instance that observed them.
 */
@Injectable()
export class SessionRecordRepository {
  /**
   * The JSON each record object was read or saved as (records are not mutated once read), so that
   * getSince hands back the record it was given when the store still holds that, without parsing it.
   */
  private readonly storedAs = new WeakMap<SessionRecord, string>();
  private readonly local: LocalChannels | undefined;
  readonly #keys: DataKeys;
  /** STEP_CLAIM_TTL_MS, or longer: a switch's POST may land until the API's timeout, the step still its own. */
  readonly #stepClaimMs: number;
  /** The sessions the reconciler still has to settle: added at start, released once settled. */
  readonly queue: ReconcileQueue;
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly telemetry: VerificationTelemetry,
    /** Which sessions name a number or an owner (for erasure). */
    readonly subjects: SubjectIndex,
  ) {
    this.queue = new ReconcileQueue(options, store);
    this.#keys = options.dataKeys;
    this.#stepClaimMs = Math.max(
      STEP_CLAIM_TTL_MS,
      longestCallMs(options.api, 'POST') + STEP_CLAIM_MARGIN_MS,
    );
    if (typeof store.publish !== 'function' || typeof store.subscribe !== 'function')
      this.local = new LocalChannels();
  }

  // A spare test session's are its slot's (`storedSessionId`): reads check the id the entry holds.
  static key(requestId: string): string {
    return `session:{${storedSessionId(requestId)}}`;
  }

  static journeyKey(journeyId: string): string {
    return `journey:{${storedSessionId(journeyId)}}`;
  }

  /** The claim on step `n` (0-based: the step a journey of `n` steps takes next). */
  static stepClaimKey(journeyId: string, n: number): string {
    return `journey-step:{${storedSessionId(journeyId)}}:${n}`;
  }

  async get(requestId: string): Promise<SessionRecord | null> {
    const raw = await this.store.get(SessionRecordRepository.key(requestId));
    if (raw === null) return null;
    const record = this.#openedSession(raw, requestId);
    // A spare test session's slot taken by a newer one: this session is gone.
    if (record.requestId !== requestId) return null;
    this.storedAs.set(record, raw);
    return record;
  }

  /**
   * The record as stored now; `known` itself when the store still holds what `known` was read or
   * saved as (a pending status poll re-reads its record, usually unchanged).
   */
  async getSince(requestId: string, known: SessionRecord | null | undefined): Promise<SessionRecord | null> {
    const raw = await this.store.get(SessionRecordRepository.key(requestId));
    if (raw === null) return null;
    if (known && this.storedAs.get(known) === raw) return known;
    const record = this.#openedSession(raw, requestId);
    if (record.requestId !== requestId) return null;
    this.storedAs.set(record, raw);
    return record;
  }

  /**
   * The store probe before paying, which is also the reservation of the session's erasure index slots
   * (under its number and owner): rejects with the store's error when it cannot be reached.
   */
  reserveIndex(subject: { phoneNumber: string; owner?: string | undefined }): Promise<IndexReservation> {
    return this.subjects.reserve(subject);
  }

  /** Frees a reservation (`reserveIndex`) whose session will not be recorded with it: a refused start's. */
  releaseIndex(reservation: IndexReservation): Promise<void> {
    return this.subjects.release(reservation);
  }

  /** An erased session's mark: a save that was in flight during the erasure is undone, never kept. */
  static erasedKey(requestId: string): string {
    const stored = storedSessionId(requestId);
    return stored === requestId ? `erased:{${requestId}}` : `erased:{${stored}}:${requestId}`;
  }

  /**
   * Stores a session's first record and indexes it (followed by the reconciler, under its number and
   * owner, with its callers), together: the erasure mark is read with the write, so an erasure that
   * found the index before the record landed still removes it. With the slots `reserved` before paying,
   * they go in the record's batch, after it (one round trip; on one connection Redis keeps the order, so
   * an index slot names a stored record); else they are added beside it. `whenStored`: the caller's
   * writes that follow the record (a coalescing claim handing it back), issued right after its batch.
   * Answers false when the session, its number or its owner was erased while the API was asked: what
   * it wrote is removed again.
   */
  async createAndFollow(
    record: SessionRecord,
    callers: readonly string[] = [],
    whenStored?: (record: SessionRecord) => Promise<void>,
    reserved?: IndexReservation,
  ): Promise<boolean> {
    const raw = this.#sealedSession(record);
    const slots = reserved && this.subjects.writes(record, callers, reserved);
    const written = storeBatch(this.store, [
      {
        op: 'set',
        key: SessionRecordRepository.key(record.requestId),
        value: raw,
        ttlMs: this.#ttl(record.expiresAt),
      },
      { op: 'get', key: SessionRecordRepository.erasedKey(record.requestId) },
      ...(slots ?? []),
      ...(slots && reserved ? this.subjects.markReads(reserved) : []),
    ]);
    const indexed = Promise.all([
      this.queue.track(record),
      slots ? undefined : this.subjects.add(record, callers),
    ]);
    const handedBack = whenStored?.(record);
    // Erased while the API was asked: the session itself (its mark), or its number or owner (their
    // mark changed since the slots were reserved: the erasure could not find it).
    const [[, mark, ...rest]] = await Promise.all([written, indexed, handedBack]);
    const gone =
      mark !== null ||
      (slots !== undefined && this.subjects.erasedSince(reserved!, rest.slice(slots.length)));
    if (!gone) {
      this.storedAs.set(record, raw);
      return true;
    }
    // Marked as an erasure marks it: a late webhook or refresh of it is not recorded again.
    const keptMs = this.#ttl(record.expiresAt);
    await Promise.all([
      this.erase(record.requestId, keptMs),
      ...(slots ?? []).map((s) => this.store.delete(s.key)),
    ]);
    return false;
  }

  /** Stores a session's changed record; one an erasure removed meanwhile is not brought back (false). */
  async save(record: SessionRecord): Promise<boolean> {
    // A spare test session whose slot a newer one took is gone: never written over the newer one.
    if (storedSessionId(record.requestId) !== record.requestId && (await this.get(record.requestId)) === null)
      return false;
    const raw = this.#sealedSession(record);
    const key = SessionRecordRepository.key(record.requestId);
    // Issued together (one slot, one round trip): the write, then the erasure mark read after it.
    const [, erased] = await Promise.all([
      this.store.set(key, raw, this.#ttl(record.expiresAt)),
      this.store.get(SessionRecordRepository.erasedKey(record.requestId)),
    ]);
    if (erased !== null) {
      await this.remove(record.requestId);
      return false;
    }
    this.storedAs.set(record, raw);
    return true;
  }

  /** Saves only when no record of the session is stored (a rebuilt one never overwrites a newer one). */
  async saveIfAbsent(record: SessionRecord): Promise<boolean> {
    const [saved, erased] = await Promise.all([
      this.store.setIfAbsent(
        SessionRecordRepository.key(record.requestId),
        this.#sealedSession(record),
        this.#ttl(record.expiresAt),
      ),
      this.store.get(SessionRecordRepository.erasedKey(record.requestId)),
    ]);
    if (erased === null) return saved;
    await this.remove(record.requestId);
    return false;
  }

  /** A session started or adopted: followed by the reconciler, indexed under its number and owner (with its callers). */
  async follow(record: SessionRecord, callers?: readonly string[]): Promise<void> {
    await Promise.all([this.queue.track(record), this.subjects.add(record, callers)]);
  }

  /** Whether the session was erased (`erase`) while its mark is kept. */
  async isErased(requestId: string): Promise<boolean> {
    return (await this.store.get(SessionRecordRepository.erasedKey(requestId))) !== null;
  }

  /**
   * Erases a session: marked first (for `keptMs`), then removed, so that a save racing the erasure
   * either lands before the removal or reads the mark after its write and removes itself.
   */
  async erase(requestId: string, keptMs: number): Promise<void> {
    await this.store.set(SessionRecordRepository.erasedKey(requestId), '1', keptMs);
    await this.remove(requestId);
  }

  /** Removes a session's record, its journey's and the reconciler's schedule of it. */
  private async remove(requestId: string): Promise<void> {
    // A spare test session's slot now another's is left to it.
    if (storedSessionId(requestId) !== requestId && (await this.get(requestId)) === null)
      return this.queue.release(requestId);
    await Promise.all([
      this.store.delete(SessionRecordRepository.key(requestId)),
      this.store.delete(SessionRecordRepository.journeyKey(requestId)),
      this.queue.release(requestId),
    ]);
  }

  async getJourney(journeyId: string): Promise<JourneyRecord | null> {
    const raw = await this.store.get(SessionRecordRepository.journeyKey(journeyId));
    const journey = raw === null ? null : this.#opened<JourneyRecord>(raw);
    return journey?.journeyId === journeyId ? journey : null;
  }

  /** Saves the journey for as long as its newest session's record is kept (`expiresAt`: that session's end). */
  async saveJourney(journey: JourneyRecord, expiresAt: number): Promise<void> {
    const key = SessionRecordRepository.journeyKey(journey.journeyId);
    await this.store.set(key, this.#sealed(journey), this.#ttl(expiresAt));
  }

  /** Saves the journey unless the store holds one already (then that one stands). True when saved. */
  async saveJourneyIfAbsent(journey: JourneyRecord, expiresAt: number): Promise<boolean> {
    const key = SessionRecordRepository.journeyKey(journey.journeyId);
    return this.store.setIfAbsent(key, this.#sealed(journey), this.#ttl(expiresAt));
  }

  /**
   * Claims the journey's step `n` across every instance (set-if-absent): one switch (or cancel) at a
   * time, so two concurrent switches cannot both pay. Null when another holds it.
   */
  claimStep(journeyId: string, n: number): Promise<StoreClaim | null> {
    return takeClaim(this.store, SessionRecordRepository.stepClaimKey(journeyId, n), this.#stepClaimMs);
  }

  /** Before a switch's POST: its step claim renewed if its admission took over half the margin; null: another's. */
  renewStep = (c: StoreClaim) => renewClaim(this.store, c, this.#stepClaimMs, STEP_CLAIM_MARGIN_MS / 2);

  /** Gives a claim back while it is still this one (the step was not taken). */
  async releaseStep(claim: StoreClaim): Promise<void> {
    await releaseClaim(this.store, claim);
  }

  /** Announces a change. Never rejects: a stream that misses it still sees the next change or its end. */
  async announce(requestId: string): Promise<void> {
    if (this.local) return this.local.publish(SESSION_CHANGED_CHANNEL, requestId);
    try {
      await this.store.publish!(SESSION_CHANGED_CHANNEL, requestId);
    } catch (error) {
      this.telemetry.logger.warn(`could not announce a session change: ${errorText(error)}`);
    }
  }

  /** Calls `listener` with the request id of each change announced from now on; `onGap` when some were missed. */
  async listen(listener: (requestId: string) => void, onGap?: () => void): Promise<() => void> {
    if (this.local) return this.local.subscribe(SESSION_CHANGED_CHANNEL, listener);
    return this.store.subscribe!(SESSION_CHANGED_CHANNEL, listener, onGap);
  }

  /**
   * A record as stored: its number and owner sealed with the data key (the owner's answers and the
   * events need them whole), the rest as it is (status, times and cost are read by the module alone).
   */
  #sealed(record: SessionRecord | JourneyRecord): string {
    return JSON.stringify(this.#sealedFields(record));
  }

  #sealedFields<T extends Sealable>(record: T): T {
    const { phoneNumber, owner } = record;
    return {
      ...record,
      phoneNumber: this.#keys.seal(phoneNumber),
      ...(owner === undefined ? {} : { owner: this.#keys.seal(owner) }),
    };
  }

  /** A session's record as stored under its key (`storedRecord`: short names, what the key and the defaults say left out). */
  #sealedSession(record: SessionRecord): string {
    const idInKey = storedSessionId(record.requestId) === record.requestId;
    return JSON.stringify(storedRecord(this.#sealedFields(record), idInKey));
  }

  /** A session's record read under `requestId`'s key. */
  #openedSession(raw: string, requestId: string): SessionRecord {
    return this.#openedFields(restoredRecord(JSON.parse(raw) as Record<string, unknown>, requestId));
  }

  #opened<T extends SessionRecord | JourneyRecord>(raw: string): T {
    return this.#openedFields(JSON.parse(raw) as T);
  }

  /** A stored record's sealed fields opened; one sealed under another data key reads as empty (a rotation forgets it). */
  #openedFields<T extends Sealable>(stored: T): T {
    const phoneNumber = this.#keys.open(stored.phoneNumber) ?? '';
    if (stored.owner === undefined) return { ...stored, phoneNumber };
    return { ...stored, phoneNumber, owner: this.#keys.open(stored.owner) ?? undefined };
  }

  /** A record's time to live: its session's end, and the retention after it. */
  /**
   * A record is kept to its session's end and the retention after it, counted from the end whenever it is
   * saved: no longer than its erasure index slots (`SubjectIndex`), so an erasure finds every record still
   * kept. One saved past that (a session rebuilt from the API, indexed then) is kept the retention from now.
   */
  #ttl(expiresAt: number): number {
    const left = expiresAt + RECORD_RETENTION_MS - this.store.now();
    return left > 0 ? left : RECORD_RETENTION_MS;
  }
}

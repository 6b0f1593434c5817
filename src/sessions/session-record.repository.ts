import { Inject, Injectable } from '@nestjs/common';
import { VerificationStore } from '../store/verification-store.interface.js';
import type { SessionRecord } from '../core/session-record.js';

export interface StoredRecord {
  record: SessionRecord;
  raw: string;
}

/** How long a record outlives its session: terminal states stay readable (and cached) this long. */
export const RECORD_RETENTION_MS = 24 * 3_600_000;

/** Session records in the store. The hash tag keeps one session's keys on one Redis Cluster slot. */
@Injectable()
export class SessionRecordRepository {
  /** The JSON each record object was read as or saved as (records are never mutated once read). */
  readonly #storedAs = new WeakMap<SessionRecord, string>();

  constructor(@Inject(VerificationStore) private readonly store: VerificationStore) {}

  static key(requestId: string): string {
    return `session:{${requestId}}`;
  }

  // `get` and `getStoredSince` are the status poll's two reads.
  async get(requestId: string): Promise<SessionRecord | null> {
    const raw = await this.store.get(SessionRecordRepository.key(requestId));
    return raw === null ? null : this.#parse(raw);
  }

  /** The record with the JSON it was stored as: comparing that string tells whether a merge changed anything. */
  async getStored(requestId: string): Promise<StoredRecord | null> {
    return this.getStoredSince(requestId, undefined);
  }

  /**
   * Reads the record again; when the store still holds what `known` was read or saved as, `known`
   * itself is returned instead of a second parse of the same JSON (the usual pending status poll).
   */
  async getStoredSince(
    requestId: string,
    known: SessionRecord | null | undefined,
  ): Promise<StoredRecord | null> {
    const raw = await this.store.get(SessionRecordRepository.key(requestId));
    if (raw === null) return null;
    if (known && this.#storedAs.get(known) === raw) return { record: known, raw };
    return { record: this.#parse(raw), raw };
  }

  #parse(raw: string): SessionRecord {
    const record = JSON.parse(raw) as SessionRecord;
    this.#storedAs.set(record, raw);
    return record;
  }

  /** Rejects with the store's error when it cannot be reached (one cheap read). */
  async ensureReachable(): Promise<void> {
    await this.store.get(SessionRecordRepository.key('reachability-probe'));
  }

  /** `raw`: the record already serialised (`JSON.stringify(record)`), when the caller has it. */
  async save(record: SessionRecord, raw = JSON.stringify(record)): Promise<void> {
    await this.store.set(SessionRecordRepository.key(record.requestId), raw, this.#ttl(record));
    this.#storedAs.set(record, raw);
  }

  /** Saves only when no record of the session is stored (a rebuilt one never overwrites a newer one). */
  async saveIfAbsent(record: SessionRecord): Promise<boolean> {
    const raw = JSON.stringify(record);
    const saved = await this.store.setIfAbsent(
      SessionRecordRepository.key(record.requestId),
      raw,
      this.#ttl(record),
    );
    if (saved) this.#storedAs.set(record, raw);
    return saved;
  }

  #ttl(record: SessionRecord): number {
    return Math.max(record.expiresAt - this.store.now(), 0) + RECORD_RETENTION_MS;
  }
}

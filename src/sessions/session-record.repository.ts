import { Inject, Injectable } from '@nestjs/common';
import { VerificationStore } from '../store/verification-store.interface.js';
import type { SessionRecord } from '../core/session-record.js';

/** How long a record outlives its session: terminal states stay readable (and cached) this long. */
export const RECORD_RETENTION_MS = 24 * 3_600_000;

/** Session records in the store. The hash tag keeps one session's keys on one Redis Cluster slot. */
@Injectable()
export class SessionRecordRepository {
  /**
   * The JSON each record object was read or saved as (records are not mutated once read), so that
   * getSince hands back the record it was given when the store still holds that, without parsing it.
   */
  private readonly storedAs = new WeakMap<SessionRecord, string>();

  constructor(@Inject(VerificationStore) private readonly store: VerificationStore) {}

  static key(requestId: string): string {
    return `session:{${requestId}}`;
  }

  async get(requestId: string): Promise<SessionRecord | null> {
    const raw = await this.store.get(SessionRecordRepository.key(requestId));
    if (raw === null) return null;
    const record = JSON.parse(raw) as SessionRecord;
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
    const record = JSON.parse(raw) as SessionRecord;
    this.storedAs.set(record, raw);
    return record;
  }

  /** Rejects with the store's error when it cannot be reached (one cheap read). */
  async ensureReachable(): Promise<void> {
    await this.store.get(SessionRecordRepository.key('reachability-probe'));
  }

  async save(record: SessionRecord): Promise<void> {
    const raw = JSON.stringify(record);
    await this.store.set(SessionRecordRepository.key(record.requestId), raw, this.#ttl(record));
    this.storedAs.set(record, raw);
  }

  /** Saves only when no record of the session is stored (a rebuilt one never overwrites a newer one). */
  async saveIfAbsent(record: SessionRecord): Promise<boolean> {
    return this.store.setIfAbsent(
      SessionRecordRepository.key(record.requestId),
      JSON.stringify(record),
      this.#ttl(record),
    );
  }

  #ttl(record: SessionRecord): number {
    return Math.max(record.expiresAt - this.store.now(), 0) + RECORD_RETENTION_MS;
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { VerificationStore } from '../store/verification-store.interface.js';
import type { SessionRecord } from '../core/session-record.js';

/** How long a record outlives its session: terminal states stay readable (and cached) this long. */
export const RECORD_RETENTION_MS = 24 * 3_600_000;

/** Session records in the store. The hash tag keeps one session's keys on one Redis Cluster slot. */
@Injectable()
export class SessionRecordRepository {
  constructor(@Inject(VerificationStore) private readonly store: VerificationStore) {}

  static key(requestId: string): string {
    return `session:{${requestId}}`;
  }

  async get(requestId: string): Promise<SessionRecord | null> {
    const raw = await this.store.get(SessionRecordRepository.key(requestId));
    return raw === null ? null : (JSON.parse(raw) as SessionRecord);
  }

  /** Rejects with the store's error when it cannot be reached (one cheap read). */
  async ensureReachable(): Promise<void> {
    await this.store.get(SessionRecordRepository.key('reachability-probe'));
  }

  async save(record: SessionRecord): Promise<void> {
    await this.store.set(
      SessionRecordRepository.key(record.requestId),
      JSON.stringify(record),
      this.#ttl(record),
    );
  }

  /**
   * Saves `record` unless it holds exactly what `before` (the record it was made from) held: most
   * status polls change nothing, and then write nothing. Whether it saved.
   */
  async saveIfChanged(record: SessionRecord, before: SessionRecord | null): Promise<boolean> {
    const raw = JSON.stringify(record);
    if (before !== null && raw === JSON.stringify(before)) return false;
    await this.store.set(SessionRecordRepository.key(record.requestId), raw, this.#ttl(record));
    return true;
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

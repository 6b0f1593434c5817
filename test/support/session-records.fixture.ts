/**
 * The session records' specs' host-less set-up: a repository over a store as the module makes it, and a
 * pending session to store. No API is called (its address answers nothing).
 */
import type { SessionRecord } from '../../src/core/session-record.js';
import { VerificationLogger } from '../../src/observability/verification-logger.js';
import { resolveVerificationOptions } from '../../src/options/verification.options.js';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
} from '../../src/sessions/session-record.repository.js';
import { SubjectIndex } from '../../src/sessions/subject-index.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { telemetryOf } from './telemetry.js';

export const RECORD_OPTIONS = resolveVerificationOptions({
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
});

/** A SessionRecordRepository over `store`, with its erasure index, logging nothing; `options`: RECORD_OPTIONS. */
export function recordsOn(store: VerificationStore, options = RECORD_OPTIONS): SessionRecordRepository {
  return new SessionRecordRepository(
    options,
    store,
    telemetryOf(new VerificationLogger({ ...options, logLevels: false })),
    new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS),
  );
}

/** A pending SMS session started at `at`, 300 s long. */
export function pendingSession(
  fields: Pick<SessionRecord, 'requestId' | 'phoneNumber'> & Partial<SessionRecord>,
  at: number,
): SessionRecord {
  return {
    method: 'sms',
    status: 'sent',
    awaitingCode: true,
    createdAt: at,
    expiresAt: at + 300_000,
    verifiedAt: null,
    ...fields,
  };
}

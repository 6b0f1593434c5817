import type { LoggerService } from '@nestjs/common';
import type { VerificationApiClient } from '../../src/api/verification-api.client.js';
import type { VerificationSession } from '../../src/api/api.types.js';
import type { VerificationHistory } from '../../src/history/verification-history.service.js';
import { VerificationLogger } from '../../src/observability/verification-logger.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
} from '../../src/sessions/session-record.repository.js';
import { SubjectIndex } from '../../src/sessions/subject-index.js';
import type { MemoryStore } from '../../src/store/memory.store.js';
import { InDoubtStarts } from '../../src/verification/in-doubt-starts.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { telemetryOf } from '../support/telemetry.js';

/**
 * The parts an in-doubt start meets an erasure through, over `store`, with an API whose sessions are
 * `getSession`'s (the erasure-in-doubt attacks at unit level; a promise: an API read that takes a while):
 * the records, the erasure (its history forgets nothing) and the in-doubt starts, their warnings to
 * `logger` when given (silent otherwise).
 */
export function inDoubtParts(
  options: ResolvedVerificationOptions,
  store: MemoryStore,
  getSession: (id: string) => VerificationSession | undefined | Promise<VerificationSession | undefined>,
  logger?: LoggerService,
): { records: SessionRecordRepository; erasure: VerificationErasure; inDoubt: InDoubtStarts } {
  const telemetry = telemetryOf(
    new VerificationLogger(
      logger === undefined ? { ...options, logLevels: false } : { ...options, logger, logLevels: ['warn'] },
    ),
  );
  const records = new SessionRecordRepository(
    options,
    store,
    telemetry,
    new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS),
  );
  const history = { forget: () => Promise.resolve(0) } as unknown as VerificationHistory;
  const erasure = new VerificationErasure(options, store, records, history);
  const api = {
    getSession: (id: string) => Promise.resolve(getSession(id)),
  } as unknown as VerificationApiClient;
  return { records, erasure, inDoubt: new InDoubtStarts(options, api, records, store, telemetry) };
}

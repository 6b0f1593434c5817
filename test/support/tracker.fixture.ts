import { EventEmitter2 } from '@nestjs/event-emitter';
import type { VerificationSession } from '../../src/api/api.types.js';
import { FigureEvidence } from '../../src/account/figure-evidence.js';
import { MethodStats } from '../../src/account/method-stats.service.js';
import type { SessionRecord } from '../../src/core/session-record.js';
import { VerificationHandleCodec } from '../../src/core/verification-handle.codec.js';
import type { VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import { VerificationLogger } from '../../src/observability/verification-logger.js';
import { VerificationMetrics } from '../../src/observability/verification-metrics.js';
import {
  resolveVerificationOptions,
  type ResolvedVerificationOptions,
} from '../../src/options/verification.options.js';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
} from '../../src/sessions/session-record.repository.js';
import { SubjectIndex } from '../../src/sessions/subject-index.js';
import { VerificationTracker } from '../../src/sessions/verification.tracker.js';
import type { MemoryStore } from '../../src/store/memory.store.js';
import { pendingSession } from './session-records.fixture.js';
import { telemetryOf } from './telemetry.js';

/**
 * The tracker as the module makes it, for the tracker's unit specs: one instance over a shared store,
 * the record of a pending SMS (`req-1`) and what the API answers of it.
 */
const API = { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' };

/** The record of a pending SMS (`req-1`) started at `at`. */
export function pendingSms(at: number, fields: Partial<SessionRecord> = {}): SessionRecord {
  return pendingSession({ requestId: 'req-1', phoneNumber: '+79123456789', ...fields }, at);
}

/** What the API answers of the SMS started at `at`. */
export function observedSms(
  at: number,
  status: VerificationSession['status'],
  fields: Partial<VerificationSession> = {},
): VerificationSession {
  return {
    requestId: 'req-1',
    phoneNumber: '+79123456789',
    method: 'sms',
    status,
    verifiedAt: null,
    expiresAt: new Date(at + 300_000),
    awaitingCode: true,
    ...fields,
  };
}

export interface TrackerInstance {
  options: ResolvedVerificationOptions;
  logger: VerificationLogger;
  records: SessionRecordRepository;
  tracker: VerificationTracker;
  emitter: EventEmitter2;
  codec: VerificationHandleCodec;
  stats?: MethodStats;
}

/** One instance of the module over `store`: its records, tracker, emitter and codec, on `clock`. */
export function trackerOver(
  store: MemoryStore,
  clock: () => number,
  setup: {
    name?: string;
    options?: Partial<Parameters<typeof resolveVerificationOptions>[0]>;
    emitter?: EventEmitter2;
    withStats?: boolean;
    ledger?: VerificationLedger;
  } = {},
): TrackerInstance {
  const options = resolveVerificationOptions({
    api: API,
    clock,
    ...(setup.name ? { name: setup.name } : {}),
    ...setup.options,
  });
  const logger = new VerificationLogger({ ...options, logLevels: false });
  const telemetry = telemetryOf(logger);
  const records = new SessionRecordRepository(
    options,
    store,
    telemetry,
    new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS),
  );
  const stats = setup.withStats
    ? new MethodStats(
        store,
        telemetryOf(logger, VerificationMetrics.disabled()),
        new FigureEvidence(store, options.dataKeys),
      )
    : undefined;
  const emitter = setup.emitter ?? new EventEmitter2({ wildcard: true });
  const codec = new VerificationHandleCodec(options.handleKey);
  const tracker = new VerificationTracker(
    options,
    store,
    records,
    telemetry,
    codec,
    emitter,
    stats,
    setup.ledger,
  );
  return { options, logger, records, tracker, emitter, codec, stats };
}

import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { VerificationSession } from '../api/api.types.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { MemoryStore } from '../store/memory.store.js';
import { resolveVerificationOptions } from '../options/verification.options.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from './session-record.repository.js';
import { SubjectIndex } from './subject-index.js';
import { VerificationHandleCodec } from '../core/verification-handle.codec.js';
import type { VerificationLedger } from '../ledger/verification-ledger.service.js';
import { VerificationTracker } from './verification.tracker.js';
import { FakeUsage, ledgerOn } from '../../test/support/ledger.fixture.js';
import { telemetryOf } from '../../test/support/telemetry.js';

/** What the host's ledger report shows of the sessions the tracker observed, and a first sighting already delivered. */
const START = Date.UTC(2026, 2, 15, 12);
const API = { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' };

function observed(status: VerificationSession['status'], requestId = 'req-1'): VerificationSession {
  return {
    requestId,
    phoneNumber: '+79123456789',
    method: 'sms',
    status,
    verifiedAt: null,
    expiresAt: new Date(START + 300_000),
    awaitingCode: true,
    cost: { amount: 3, currency: 'RUB' },
  };
}

describe('VerificationTracker: what the ledger counts of an observation', () => {
  let store: MemoryStore;
  let ledger: VerificationLedger;
  let records: SessionRecordRepository;
  let tracker: VerificationTracker;

  beforeEach(() => {
    store = new MemoryStore({ clock: () => START });
    ({ ledger } = ledgerOn(store, new FakeUsage(), () => START));
    const options = resolveVerificationOptions({ api: API, clock: () => START, ledger: {} });
    const logger = new VerificationLogger({ ...options, logLevels: false });
    records = new SessionRecordRepository(
      options,
      store,
      telemetryOf(logger),
      new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS),
    );
    const codec = new VerificationHandleCodec(options.handleKey);
    tracker = new VerificationTracker(
      options,
      store,
      records,
      telemetryOf(logger),
      codec,
      new EventEmitter2(),
      undefined,
      ledger,
    );
  });
  afterEach(() => store.close());

  it('a delivery and an outcome the tracker sees are in the day’s report, each once however often seen', async () => {
    await tracker.observe(observed('sent'), 'webhook');
    await tracker.observe(observed('delivered'), 'poll');
    await tracker.observe(observed('delivered'), 'poll');
    await tracker.observe(observed('verified'), 'webhook');
    await tracker.observe(observed('verified'), 'poll');
    expect((await ledger.report('2026-03-15')).totals).toMatchObject({
      started: 1,
      delivered: 1,
      verified: 1,
      expected: 3,
    });
  });

  it('a session first seen already delivered is recorded and counted delivered', async () => {
    await tracker.observe(observed('delivered', 'req-2'), 'webhook');
    await expect(records.get('req-2')).resolves.toMatchObject({ status: 'delivered', delivered: true });
    expect((await ledger.report('2026-03-15')).totals).toMatchObject({ started: 1, delivered: 1 });
  });
});

import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { VerificationSession } from '../api/api.types.js';
import { MemoryStore } from '../store/memory.store.js';
import type { SessionRecordRepository } from './session-record.repository.js';
import type { VerificationLedger } from '../ledger/verification-ledger.service.js';
import type { VerificationTracker } from './verification.tracker.js';
import { FakeUsage, ledgerOn } from '../../test/support/ledger.fixture.js';
import { observedSms, trackerOver } from '../../test/support/tracker.fixture.js';

/** What the host's ledger report shows of the sessions the tracker observed, and a first sighting already delivered. */
const START = Date.UTC(2026, 2, 15, 12);

function observed(status: VerificationSession['status'], requestId = 'req-1'): VerificationSession {
  return observedSms(START, status, { requestId, cost: { amount: 3, currency: 'RUB' } });
}

describe('VerificationTracker: what the ledger counts of an observation', () => {
  let store: MemoryStore;
  let ledger: VerificationLedger;
  let records: SessionRecordRepository;
  let tracker: VerificationTracker;

  beforeEach(() => {
    store = new MemoryStore({ clock: () => START });
    ({ ledger } = ledgerOn(store, new FakeUsage(), () => START));
    ({ records, tracker } = trackerOver(store, () => START, {
      options: { ledger: {} },
      emitter: new EventEmitter2(),
      ledger,
    }));
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

import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { VerificationSession } from '../api/api.types.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { MemoryStore } from '../store/memory.store.js';
import { resolveVerificationOptions } from '../options/verification.options.js';
import { ReconcileQueue } from './reconcile-queue.js';
import { JourneyRepository } from './journey.repository.js';
import { SessionChanges } from './session-changes.js';
import { SessionRecordRepository } from './session-record.repository.js';
import type { SessionRecord } from '../core/session-record.js';
import { VerificationTracker } from './verification.tracker.js';

const NOW = 1_700_000_000_000;

const pending: SessionRecord = {
  requestId: 'req-1',
  phoneNumber: '+79123456789',
  method: 'sms',
  status: 'sent',
  awaitingCode: true,
  createdAt: NOW,
  expiresAt: NOW + 300_000,
  verifiedAt: null,
};

/** What the API answered at some moment: a stale poll carries an older state than the record's. */
function observed(
  status: VerificationSession['status'],
  verifiedAt: Date | null = null,
): VerificationSession {
  return {
    requestId: 'req-1',
    phoneNumber: '+79123456789',
    method: 'sms',
    status,
    verifiedAt,
    expiresAt: new Date(NOW + 300_000),
    awaitingCode: true,
  };
}

/**
 * A terminal state is final: a poll answered just before a check (so carrying `sent`) may arrive
 * after the check's `verified`; it must never move the session back, nor emit anything again.
 */
describe('VerificationTracker: terminal is final', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  let tracker: VerificationTracker;
  let emitted: string[];

  beforeEach(() => {
    store = new MemoryStore({ clock: () => NOW });
    records = new SessionRecordRepository(store);
    const options = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock: () => NOW,
    });
    const emitter = new EventEmitter2();
    emitted = [];
    emitter.onAny((event) => void emitted.push(String(event)));
    const logger = new VerificationLogger({ ...options, logLevels: false });
    tracker = new VerificationTracker(
      store,
      records,
      new ReconcileQueue(options, store),
      logger,
      new SessionChanges(store, logger),
      new JourneyRepository(store),
      emitter,
    );
  });
  afterEach(() => store.close());

  it.each(['verified', 'failed', 'expired'] as const)(
    'a %s session stays so when a stale pending observation arrives, and its event is emitted once',
    async (terminal) => {
      await records.save(pending);
      const verifiedAt = terminal === 'verified' ? new Date(NOW + 1000) : null;
      const done = await tracker.observe(observed(terminal, verifiedAt), 'check');
      expect(done.status).toBe(terminal);

      for (const stale of ['sent', 'pending', 'delivered'] as const) {
        const merged = await tracker.observe(observed(stale), 'poll');
        expect(merged.status).toBe(terminal);
        expect((await records.get('req-1'))!.status).toBe(terminal);
        // Also when the observer passes the record it read before the terminal state was stored.
        const fromOldRead = await tracker.observe(observed(stale), 'poll', pending);
        expect((await records.get('req-1'))!.status).toBe(terminal);
        expect(fromOldRead.status).toBe(terminal);
      }
      expect((await records.get('req-1'))!.verifiedAt).toBe(verifiedAt?.getTime() ?? null);
      expect(emitted).toEqual([`verification.${terminal}`]);
    },
  );
});

import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { VerificationSession } from '../api/api.types.js';
import { FigureEvidence } from '../account/figure-evidence.js';
import { MethodStats } from '../account/method-stats.service.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { VerificationMetrics } from '../observability/verification-metrics.js';
import { MemoryStore } from '../store/memory.store.js';
import { resolveVerificationOptions } from '../options/verification.options.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from './session-record.repository.js';
import { SubjectIndex } from './subject-index.js';
import type { SessionRecord } from '../core/session-record.js';
import { VerificationHandleCodec } from '../core/verification-handle.codec.js';
import { VerificationTracker } from './verification.tracker.js';
import { telemetryOf } from '../../test/support/telemetry.js';

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
/** The tracker as the module makes it, over `store`, on the fixed clock. */
function trackerOf(
  store: MemoryStore,
  emitter: EventEmitter2,
  withStats = false,
): { records: SessionRecordRepository; tracker: VerificationTracker; stats?: MethodStats } {
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => NOW,
  });
  const records = new SessionRecordRepository(
    options,
    store,
    telemetryOf(QUIET_LOGGER),
    new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS),
  );
  const logger = new VerificationLogger({ ...options, logLevels: false });
  const stats = withStats
    ? new MethodStats(
        store,
        telemetryOf(logger, VerificationMetrics.disabled()),
        new FigureEvidence(store, options.dataKeys),
      )
    : undefined;
  const codec = new VerificationHandleCodec(options.handleKey);
  const tracker = new VerificationTracker(
    options,
    store,
    records,
    telemetryOf(logger),
    codec,
    emitter,
    stats,
  );
  return { records, tracker, stats };
}

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
/** The repository logs only a failed change announcement; nothing here is meant to. */
const QUIET_LOGGER = new VerificationLogger({
  ...resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
  }),
  logLevels: false,
});

describe('VerificationTracker: terminal is final', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  let tracker: VerificationTracker;
  let emitted: string[];

  beforeEach(() => {
    store = new MemoryStore({ clock: () => NOW });
    const emitter = new EventEmitter2();
    emitted = [];
    emitter.onAny((event) => void emitted.push(String(event)));
    ({ records, tracker } = trackerOf(store, emitter));
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

/**
 * The method figures follow the tracker's transitions: a delivery counted when first seen, an
 * outcome when its event is claimed, each once even when a listener fails and the event comes again.
 */
describe('VerificationTracker: delivered flag and method figures', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  let stats: MethodStats;
  let emitter: EventEmitter2;
  let tracker: VerificationTracker;

  beforeEach(() => {
    store = new MemoryStore({ clock: () => NOW });
    emitter = new EventEmitter2();
    let made: { stats?: MethodStats };
    ({ records, tracker, ...made } = trackerOf(store, emitter, true));
    stats = made.stats!;
  });
  afterEach(() => store.close());

  it('marks the record delivered when the API shows it, and keeps it so through the outcome', async () => {
    await records.save({ ...pending, cost: { amount: 3, currency: 'RUB' } });
    await tracker.observe(observed('sent'), 'poll');
    expect((await records.get('req-1'))!.delivered).toBeUndefined();
    await tracker.observe(observed('delivered'), 'poll');
    expect((await records.get('req-1'))!.delivered).toBe(true);
    // Counted when first seen, before any outcome.
    expect((await stats.figures()).sms).toMatchObject({ delivered: 1 });
    await tracker.observe(observed('expired'), 'webhook');
    expect(await records.get('req-1')).toMatchObject({ status: 'expired', delivered: true });
    expect((await stats.figures()).sms).toMatchObject({
      started: 1,
      delivered: 1,
      expired: 1,
      charged: { amount: 3, currency: 'RUB' },
    });
  });

  it('a code method verified without a delivery seen counts as delivered; a reverse flash call does not', async () => {
    await records.save(pending);
    await tracker.observe(observed('verified', new Date(NOW + 1000)), 'check');
    expect((await records.get('req-1'))!.delivered).toBe(true);

    const rfc = { ...pending, requestId: 'req-2', method: 'reverse_flash_call', awaitingCode: false };
    await records.save(rfc);
    await tracker.observe(
      { ...observed('verified', new Date(NOW + 1000)), requestId: 'req-2', method: 'reverse_flash_call' },
      'webhook',
    );
    expect((await records.get('req-2'))!.delivered).toBeUndefined();
    expect((await stats.figures()).reverse_flash_call).toMatchObject({
      started: 1,
      delivered: 0,
      verified: 1,
    });
  });

  it('counts an outcome once when its listener fails and the event is emitted again', async () => {
    let calls = 0;
    emitter.on('verification.verified', () => {
      calls += 1;
      if (calls === 1) throw new Error('listener down');
    });
    await records.save(pending);
    await expect(tracker.observe(observed('verified', new Date(NOW + 1000)), 'webhook')).rejects.toThrow(
      'will be delivered again',
    );
    const record = (await records.get('req-1'))!;
    await tracker.emitDue(record, 'poll');
    await tracker.emitDue(record, 'poll');
    await tracker.observe(observed('verified', new Date(NOW + 1000)), 'webhook');
    expect(calls).toBe(2);
    expect((await stats.figures()).sms).toMatchObject({ started: 1, delivered: 1, verified: 1 });
  });
});

/** The usual pending poll shows nothing new: the record is not written again, nor announced to streams. */
describe('VerificationTracker: an observation that changes nothing writes nothing', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  let tracker: VerificationTracker;
  let writes: string[];
  let announced: string[];

  beforeEach(() => {
    store = new MemoryStore({ clock: () => NOW });
    const set = store.set.bind(store);
    writes = [];
    store.set = (key, ...rest) => {
      writes.push(key);
      return set(key, ...rest);
    };
    ({ records, tracker } = trackerOf(store, new EventEmitter2()));
    announced = [];
    records.announce = async (requestId: string) => void announced.push(requestId);
  });
  afterEach(() => store.close());

  it('writes and announces a change, then nothing for the same state seen again, read or given', async () => {
    await records.save(pending);
    writes.length = 0;
    const sent = await tracker.observe(
      { ...observed('sent'), expiresAt: new Date(pending.expiresAt) },
      'poll',
    );
    expect(writes).toEqual([]);
    expect(announced).toEqual([]);
    // The record given back is the one given: a caller holding it can tell nothing changed.
    const again = await tracker.observe(
      { ...observed('sent'), expiresAt: new Date(pending.expiresAt) },
      'poll',
      sent,
    );
    expect(again).toBe(sent);
    expect(writes).toEqual([]);

    const delivered = await tracker.observe(observed('delivered'), 'poll', sent);
    expect(writes).toEqual([SessionRecordRepository.key('req-1')]);
    expect(announced).toEqual(['req-1']);
    expect(await records.get('req-1')).toMatchObject({ status: 'delivered', delivered: true });

    await tracker.observe(observed('delivered'), 'poll', delivered);
    expect(writes).toHaveLength(1);
    expect(announced).toHaveLength(1);
  });

  it('a session it has no record of is written on its first observation', async () => {
    await tracker.observe(observed('sent'), 'webhook');
    expect(writes).toEqual([SessionRecordRepository.key('req-1')]);
    expect(await records.get('req-1')).toMatchObject({ requestId: 'req-1', status: 'sent' });
  });
});

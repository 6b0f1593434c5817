import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { VerificationSession } from '../api/api.types.js';
import type { MethodStats } from '../account/method-stats.service.js';
import { MemoryStore } from '../store/memory.store.js';
import { SessionRecordRepository } from './session-record.repository.js';
import type { VerificationTracker } from './verification.tracker.js';
import { observedSms, pendingSms, trackerOver } from '../../test/support/tracker.fixture.js';

const NOW = 1_700_000_000_000;

const pending = pendingSms(NOW);

/** What the API answered at some moment: a stale poll carries an older state than the record's. */
function observed(
  status: VerificationSession['status'],
  verifiedAt: Date | null = null,
): VerificationSession {
  return observedSms(NOW, status, { verifiedAt });
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
    const emitter = new EventEmitter2();
    emitted = [];
    emitter.onAny((event) => void emitted.push(String(event)));
    ({ records, tracker } = trackerOver(store, () => NOW, { emitter }));
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
      expect(emitted).toStrictEqual([`verification.${terminal}`]);
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
    ({ records, tracker, ...made } = trackerOver(store, () => NOW, { emitter, withStats: true }));
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
    ({ records, tracker } = trackerOver(store, () => NOW, { emitter: new EventEmitter2() }));
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
    expect(writes).toStrictEqual([]);
    expect(announced).toStrictEqual([]);
    // The record given back is the one given: a caller holding it can tell nothing changed.
    const again = await tracker.observe(
      { ...observed('sent'), expiresAt: new Date(pending.expiresAt) },
      'poll',
      sent,
    );
    expect(again).toBe(sent);
    expect(writes).toStrictEqual([]);

    const delivered = await tracker.observe(observed('delivered'), 'poll', sent);
    expect(writes).toStrictEqual([SessionRecordRepository.key('req-1')]);
    expect(announced).toStrictEqual(['req-1']);
    expect(await records.get('req-1')).toMatchObject({ status: 'delivered', delivered: true });

    await tracker.observe(observed('delivered'), 'poll', delivered);
    expect(writes).toHaveLength(1);
    expect(announced).toHaveLength(1);
  });

  it('a session it has no record of is written on its first observation', async () => {
    await tracker.observe(observed('sent'), 'webhook');
    expect(writes).toStrictEqual([SessionRecordRepository.key('req-1')]);
    expect(await records.get('req-1')).toMatchObject({ requestId: 'req-1', status: 'sent' });
  });
});

describe('VerificationTracker: an erased session', () => {
  it('is told erased while its mark is kept, and another session is not', async () => {
    const store = new MemoryStore({ clock: () => NOW });
    const { records, tracker } = trackerOver(store, () => NOW, { emitter: new EventEmitter2() });
    await records.save(pending);
    await records.save({ ...pending, requestId: 'req-2' });
    await records.erase('req-1', 60_000);
    await expect(tracker.wasErased('req-1')).resolves.toBe(true);
    await expect(tracker.wasErased('req-2')).resolves.toBe(false);
    await store.close();
  });
});

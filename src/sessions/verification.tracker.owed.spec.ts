import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { VerificationSession } from '../api/api.types.js';
import { MemoryStore } from '../store/memory.store.js';
import { RECORD_RETENTION_MS, type SessionRecordRepository } from './session-record.repository.js';
import type { SessionRecord } from '../core/session-record.js';
import { VerificationListenerError } from './verification.tracker.js';
import { observedSms, pendingSms, trackerOver } from '../../test/support/tracker.fixture.js';

/**
 * What an observation leaves behind for the host: the record it merges (a first sighting, a late
 * outcome on a terminal record), when the reconciler looks at the session again after an emission
 * (settled, failed, held by another instance), and a journey's verified given back after a store failure.
 */
const START = 1_700_000_000_000;

const pending = pendingSms(START);

function observed(
  status: VerificationSession['status'],
  fields: Partial<VerificationSession> = {},
): VerificationSession {
  return observedSms(START, status, fields);
}

describe('VerificationTracker: the record an observation leaves and when the session is looked at again', () => {
  let now: number;
  let store: MemoryStore;
  let received: [string, string][];

  function instance() {
    const made = trackerOver(store, () => now);
    made.emitter.onAny(
      (event, payload) => void received.push([String(event), (payload as SessionRecord).requestId]),
    );
    return made;
  }

  /** The sessions the reconciler would poll at `at` (each leased, so asked once per moment). */
  async function dueAt(records: SessionRecordRepository, at: number): Promise<string[]> {
    const was = now;
    now = at;
    const due = await records.queue.claimDue(10);
    now = was;
    return due.sort();
  }

  beforeEach(() => {
    now = START;
    store = new MemoryStore({ clock: () => now });
    received = [];
  });
  afterEach(() => store.close());

  it('a session first seen with no end stated is recorded as created and ending at the moment it was seen', async () => {
    const { records, tracker } = instance();
    now = START + 5000;
    await tracker.observe(observed('sent', { expiresAt: undefined }), 'webhook');
    await expect(records.get('req-1')).resolves.toMatchObject({
      status: 'sent',
      createdAt: START + 5000,
      expiresAt: START + 5000,
      verifiedAt: null,
    });
  });

  it('a terminal record keeps its outcome and first verified time against a late or different answer', async () => {
    const { records, tracker } = instance();
    await records.save({ ...pending, status: 'failed' });
    await tracker.observe(observed('verified', { verifiedAt: new Date(START + 1000) }), 'webhook');
    await expect(records.get('req-1')).resolves.toMatchObject({ status: 'failed', verifiedAt: null });

    await records.save({ ...pending, requestId: 'req-2', status: 'verified', verifiedAt: START + 1000 });
    await tracker.observe(
      observed('verified', { requestId: 'req-2', verifiedAt: new Date(START + 9000) }),
      'poll',
    );
    await expect(records.get('req-2')).resolves.toMatchObject({
      status: 'verified',
      verifiedAt: START + 1000,
    });
    expect(received).toStrictEqual([
      ['verification.failed', 'req-1'],
      ['verification.verified', 'req-2'],
    ]);
  });

  it('operator_id verified while the API still shows a code wait: the outcome alone, no code_required after the fact', async () => {
    const { records, tracker } = instance();
    await records.save({ ...pending, method: 'operator_id', awaitingCode: false });
    await tracker.observe(observed('verified', { method: 'operator_id', awaitingCode: true }), 'webhook');
    expect(received).toStrictEqual([['verification.verified', 'req-1']]);
  });

  it('a settled session leaves the reconciler’s schedule; a pending one that owed code_required stays on it', async () => {
    const { records, tracker } = instance();
    await records.follow(pending);
    await records.follow({ ...pending, requestId: 'req-2', method: 'operator_id', awaitingCode: false });
    await tracker.observe(observed('verified'), 'webhook');
    await tracker.observe(observed('sent', { requestId: 'req-2', method: 'operator_id' }), 'webhook');
    expect(received).toStrictEqual([
      ['verification.verified', 'req-1'],
      ['verification.code_required', 'req-2'],
    ]);
    await expect(dueAt(records, pending.expiresAt + RECORD_RETENTION_MS)).resolves.toStrictEqual(['req-2']);
  });

  it('a listener that fails: every due event is still tried, and the session is looked at again one interval later, not before', async () => {
    const { records, tracker, emitter } = instance();
    emitter.on('verification.code_required', () => Promise.reject(new Error('listener down')));
    await records.save({ ...pending, method: 'operator_id', awaitingCode: false, fallback: true });
    await expect(
      tracker.observe(observed('verified', { method: 'operator_id', awaitingCode: false }), 'webhook'),
    ).rejects.toBeInstanceOf(VerificationListenerError);
    expect(received).toStrictEqual([
      ['verification.code_required', 'req-1'],
      ['verification.verified', 'req-1'],
    ]);
    const interval = records.queue.intervalMs({ method: 'operator_id' });
    await expect(dueAt(records, START + interval - 1)).resolves.toStrictEqual([]);
    await expect(dueAt(records, START + interval)).resolves.toStrictEqual(['req-1']);
  });

  it('an event another instance is still emitting: this one emits nothing and looks again one interval later', async () => {
    const dying = instance();
    const other = instance();
    let called!: () => void;
    const listening = new Promise<void>((resolve) => (called = resolve));
    dying.emitter.on('verification.verified', () => (called(), new Promise(() => undefined)));
    await dying.records.save(pending);
    void dying.tracker.observe(observed('verified'), 'webhook');
    await listening;
    const record = (await other.records.get('req-1'))!;
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toStrictEqual({
      emitted: [],
      settled: false,
    });
    const interval = other.records.queue.intervalMs(record);
    await expect(dueAt(other.records, START + interval - 1)).resolves.toStrictEqual([]);
    await expect(dueAt(other.records, START + interval)).resolves.toStrictEqual(['req-1']);
  });

  it('a code_required the store fails to claim holds the outcome back: the host never hears verified before it', async () => {
    const { records, tracker } = instance();
    await records.save({ ...pending, method: 'operator_id', awaitingCode: false, fallback: true });
    const setIfAbsent = store.setIfAbsent.bind(store);
    store.setIfAbsent = (key, value, ttlMs) =>
      key.endsWith(':verification.code_required')
        ? Promise.reject(new Error('store down'))
        : setIfAbsent(key, value, ttlMs);
    await expect(
      tracker.observe(observed('verified', { method: 'operator_id', awaitingCode: false }), 'webhook'),
    ).rejects.toThrow('store down');
    expect(received).toStrictEqual([]);
    store.setIfAbsent = setIfAbsent;
    await tracker.emitDue((await records.get('req-1'))!, 'poll');
    expect(received).toStrictEqual([
      ['verification.code_required', 'req-1'],
      ['verification.verified', 'req-1'],
    ]);
  });

  it('a journey’s verified whose facts the store failed to read is given back: the next step is told verified, not verified_again', async () => {
    const { records, tracker } = instance();
    await records.save(pending);
    await records.save({ ...pending, requestId: 'req-2', journeyId: 'req-1' });
    await records.saveJourney(
      {
        journeyId: 'req-1',
        phoneNumber: pending.phoneNumber,
        steps: ['req-1', 'req-2'].map((requestId) => ({
          requestId,
          method: 'sms' as const,
          startedAt: START,
        })),
        createdAt: START,
      },
      pending.expiresAt,
    );
    const get = store.get.bind(store);
    store.get = (key) => (key.startsWith('journey:') ? Promise.reject(new Error('store down')) : get(key));
    await expect(tracker.observe(observed('verified'), 'webhook')).rejects.toThrow('store down');
    store.get = get;
    await tracker.observe(observed('verified', { requestId: 'req-2' }), 'webhook');
    expect(received).toStrictEqual([['verification.verified', 'req-2']]);
  });
});

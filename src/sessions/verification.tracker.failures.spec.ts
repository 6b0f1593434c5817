import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { VerificationSession } from '../api/api.types.js';
import { MemoryStore } from '../store/memory.store.js';
import type { SessionRecordRepository } from './session-record.repository.js';
import type { VerificationTracker } from './verification.tracker.js';
import { pendingSms, trackerOver } from '../../test/support/tracker.fixture.js';

/** A store that fails while an event is emitted: the failure reaches the caller, and the event is not lost. */
const NOW = 1_700_000_000_000;
const pending = pendingSms(NOW);
const verified: VerificationSession = {
  requestId: 'req-1',
  phoneNumber: '+79123456789',
  method: 'sms',
  status: 'verified',
  verifiedAt: new Date(NOW + 1000),
};

describe('VerificationTracker: a store failing during an emission', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  let tracker: VerificationTracker;
  let emitter: EventEmitter2;
  let received: string[];

  beforeEach(() => {
    store = new MemoryStore({ clock: () => NOW });
    emitter = new EventEmitter2();
    ({ records, tracker } = trackerOver(store, () => NOW, { emitter }));
    received = [];
    emitter.on('verification.verified', () => void received.push('verified'));
  });
  afterEach(() => store.close());

  it('a claim the store refuses fails the observation with the store’s error, a frontend’s too', async () => {
    await records.save(pending);
    const setIfAbsent = store.setIfAbsent.bind(store);
    store.setIfAbsent = () => Promise.reject(new Error('store down'));
    await expect(tracker.observe(verified, 'webhook')).rejects.toThrow('store down');
    await expect(tracker.observeQuietly(verified, 'check', pending)).rejects.toThrow('store down');
    expect(received).toStrictEqual([]);
    store.setIfAbsent = setIfAbsent;
    await expect(tracker.emitDue((await records.get('req-1'))!, 'poll')).resolves.toStrictEqual({
      emitted: ['verification.verified'],
      settled: true,
    });
  });

  it('a journey the store cannot read after the claim: the claim is given back, not held for a lease', async () => {
    await records.save(pending);
    const get = store.get.bind(store);
    store.get = (key) => (key.startsWith('journey:') ? Promise.reject(new Error('store down')) : get(key));
    await expect(tracker.observe(verified, 'webhook')).rejects.toThrow('store down');
    store.get = get;
    await expect(tracker.emitDue((await records.get('req-1'))!, 'poll')).resolves.toStrictEqual({
      emitted: ['verification.verified'],
      settled: true,
    });
    expect(received).toStrictEqual(['verified']);
  });

  it('a frontend whose listener failed is answered with the record as stored, not the one it gave', async () => {
    emitter.on('verification.verified', () => {
      throw new Error('listener down');
    });
    await records.save(pending);
    await expect(tracker.observeQuietly(verified, 'check', pending)).resolves.toMatchObject({
      status: 'verified',
      verifiedAt: NOW + 1000,
    });
  });

  it('a code wait the API leaves out is kept as the record holds it', async () => {
    await records.save(pending);
    await tracker.observe({ ...verified, status: 'delivered', verifiedAt: null }, 'poll');
    await expect(records.get('req-1')).resolves.toMatchObject({ status: 'delivered', awaitingCode: true });
  });

  it('two sessions of no journey are each verified, neither told as verified_again', async () => {
    await records.save(pending);
    await records.save({ ...pending, requestId: 'req-2' });
    await tracker.observe(verified, 'webhook');
    await tracker.observe({ ...verified, requestId: 'req-2' }, 'webhook');
    expect(received).toStrictEqual(['verified', 'verified']);
  });

  it('a journey whose first step failed is verified by its next step', async () => {
    await records.save(pending);
    await records.save({ ...pending, requestId: 'req-2', journeyId: 'req-1' });
    const steps = ['req-1', 'req-2'].map((requestId) => ({
      requestId,
      method: 'sms' as const,
      startedAt: NOW,
    }));
    await records.saveJourney(
      { journeyId: 'req-1', phoneNumber: pending.phoneNumber, steps, createdAt: NOW },
      pending.expiresAt,
    );
    const again: string[] = [];
    emitter.on('verification.verified_again', () => void again.push('verified_again'));
    await tracker.observe({ ...verified, status: 'failed', verifiedAt: null }, 'webhook');
    await tracker.observe({ ...verified, requestId: 'req-2' }, 'webhook');
    expect([...received, ...again]).toStrictEqual(['verified']);
  });
});

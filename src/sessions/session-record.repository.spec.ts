import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { SessionRecordRepository } from './session-record.repository.js';
import type { SessionRecord } from '../core/session-record.js';

const record: SessionRecord = {
  requestId: 'req-1',
  phoneNumber: '+79123456789',
  method: 'sms',
  status: 'pending',
  awaitingCode: true,
  createdAt: 1_700_000_000_000,
  expiresAt: 1_700_000_300_000,
  verifiedAt: null,
};

describe('SessionRecordRepository: a re-read skips the parse only while the store holds what was read', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  beforeEach(() => {
    store = new MemoryStore({ clock: () => 1_700_000_000_000 });
    records = new SessionRecordRepository(store);
  });
  afterEach(() => store.close());

  it('hands back the record it read when the stored JSON is unchanged, and a fresh one once another writer changed it', async () => {
    await records.save(record);
    const first = (await records.getStored('req-1'))!.record;
    expect(first).toEqual(record);
    expect((await records.getStoredSince('req-1', first))!.record).toBe(first);

    // Another observer (a webhook, another instance) stores a newer state in between.
    const verified = { ...first, status: 'verified' as const, verifiedAt: 1_700_000_100_000 };
    await store.set(SessionRecordRepository.key('req-1'), JSON.stringify(verified), 60_000);
    const again = (await records.getStoredSince('req-1', first))!;
    expect(again.record).not.toBe(first);
    expect(again.record).toEqual(verified);
    expect(again.raw).toBe(JSON.stringify(verified));
  });

  it('knows a record it saved, and never a record it did not read or save', async () => {
    const saved = { ...record, requestId: 'req-2' };
    await records.save(saved);
    expect((await records.getStoredSince('req-2', saved))!.record).toBe(saved);
    const lookalike = { ...saved };
    const read = (await records.getStoredSince('req-2', lookalike))!.record;
    expect(read).not.toBe(lookalike);
    expect(read).toEqual(saved);
    await store.delete(SessionRecordRepository.key('req-2'));
    await expect(records.getStoredSince('req-2', saved)).resolves.toBeNull();
  });
});

import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { SessionRecordRepository } from './session-record.repository.js';
import type { SessionRecord } from '../core/session-record.js';

const record: SessionRecord = {
  requestId: 'req-1',
  phoneNumber: '+79123456789',
  method: 'sms',
  status: 'sent',
  awaitingCode: true,
  createdAt: 1_700_000_000_000,
  expiresAt: 1_700_000_300_000,
  verifiedAt: null,
};

describe('SessionRecordRepository: a merge that changed nothing writes nothing', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  let writes: number;
  beforeEach(() => {
    store = new MemoryStore({ clock: () => 1_700_000_000_000 });
    const set = store.set.bind(store);
    writes = 0;
    store.set = (...args) => {
      writes++;
      return set(...args);
    };
    records = new SessionRecordRepository(store);
  });
  afterEach(() => store.close());

  it('saves a record that has no predecessor, skips one equal to what it was made from, saves a changed one', async () => {
    await expect(records.saveIfChanged(record, null)).resolves.toBe(true);
    expect(writes).toBe(1);
    const read = (await records.get('req-1'))!;
    expect(read).toEqual(record);

    await expect(records.saveIfChanged({ ...read }, read)).resolves.toBe(false);
    expect(writes).toBe(1);

    const verified = { ...read, status: 'verified', verifiedAt: 1_700_000_100_000 };
    await expect(records.saveIfChanged(verified, read)).resolves.toBe(true);
    expect(writes).toBe(2);
    await expect(records.get('req-1')).resolves.toEqual(verified);
  });

  it('a field added by the merge (the fallback mark) is a change', async () => {
    await records.save(record);
    const read = (await records.get('req-1'))!;
    await expect(records.saveIfChanged({ ...read, fallback: true }, read)).resolves.toBe(true);
    await expect(records.get('req-1')).resolves.toMatchObject({ fallback: true });
  });
});

/**
 * Attack (lane attack-r, the erasure index at the retention bound: src/sessions/subject-index.ts
 * `#slotTtl`, SessionRecordRepository's `#ttl`). A session's index slot is written once, with its first
 * record, to live as long as that record: its TTL to `expiresAt`, and the 24 h retention. Each later save
 * of the record (`save`) keeps it for `max(expiresAt − now, 0)` + 24 h *from that save*. A record saved
 * after its session's end (the reconciler's read just after expiry records `expired`, a late webhook, a
 * status read refreshing it within `reconcile.graceMs`) so outlives its slot by as long as the save came
 * after the end. In that time an erasure finds no slot, removes nothing, and answers; the record (the
 * number, the owner) is kept after the erasure, until its own TTL. Pre-existing (both TTL rules are
 * older than c5adbe4); the clock at the bound the index keeps.
 *
 * Expected: while a record is kept, an erasure of its number finds it (a record kept to its session's end
 * and the retention, counted from the end, not from its last save). Low (a window of the save's lateness,
 * seconds to `graceMs`, a day after the session; the record goes by itself). Fails on main (43fb9bf2).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
} from '../../src/sessions/session-record.repository.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { pendingSession, recordsOn } from '../support/session-records.fixture.js';

const START = 1_700_000_000_000;
const NUMBER = '+79123456783';

describe('a record saved after its session ended, and its index slot', () => {
  let now = START;
  let store: MemoryStore;
  let records: SessionRecordRepository;
  beforeEach(() => {
    now = START;
    store = new MemoryStore({ clock: () => now });
    records = recordsOn(store);
  });
  afterEach(() => store.close());

  it('an erasure while the record is kept finds it, however late its last save came', async () => {
    const record = pendingSession({ requestId: 'late-save', phoneNumber: NUMBER, owner: 'alice' }, START);
    const reserved = await records.reserveIndex({ phoneNumber: NUMBER, owner: 'alice' });
    await expect(records.createAndFollow(record, [], undefined, reserved)).resolves.toBe(true);
    // 30 s after its end the reconciler reads it expired and saves it.
    now = record.expiresAt + 30_000;
    await expect(records.save({ ...record, status: 'expired', awaitingCode: false })).resolves.toBe(true);
    // A day on, 10 s past the slot's end: while the record is kept, an erasure of its number, or of its
    // owner, finds it.
    now = record.expiresAt + RECORD_RETENTION_MS + 10_000;
    const kept = (await records.get('late-save')) !== null;
    const found = {
      byNumber: (await records.subjects.take({ phoneNumber: NUMBER })).ids,
      byOwner: (await records.subjects.take({ owner: 'alice' })).ids,
    };
    const expected = kept ? ['late-save'] : [];
    expect({ kept, found }).toEqual({ kept, found: { byNumber: expected, byOwner: expected } });
  });
});

/**
 * Attack (lane attack-q, the erasure index's slots, src/sessions/subject-index.ts and
 * SessionRecordRepository.createAndFollow). A start A of a number reserves its slot (slot 0 of the
 * day) before paying; while its API call is in flight the number is erased (`forget`: the index is
 * taken, slot 0 deleted, the subject marked). A second start C of the same number, begun after the
 * erasure and answered sooner, claims slot 0 again (set-if-absent: the erasure freed it) and writes
 * it with its record. Then A's record lands: its batch writes A over slot 0, finds the mark changed,
 * and, as an erased start should, removes its record and *deletes its slot keys*: slot 0, which now
 * was C's. C's session is stored and indexed nowhere: the next `forget({ phoneNumber })` does not find
 * it, and C's record (the number, its owner) outlives the erasure for its whole retention. Two
 * instances on one store race the same way. (A later start in flight, on a counter slot, held: C takes
 * the freed slot 0, not A's `:n`; the control case below. Before slot 0, the day's first start took
 * the counter's `:1`, which C took again after the erasure deleted the counter: the same loss.)
 *
 * Expected: a session recorded after an erasure is found by the next erasure. High (personal data
 * kept after its erasure was asked). Fails on main (5cd123dc).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { SessionRecord } from '../../src/core/session-record.js';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
} from '../../src/sessions/session-record.repository.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { pendingSession, recordsOn } from '../support/session-records.fixture.js';

const NOW = 1_700_000_000_000;
const NUMBER = '+79123456789';
const session = (requestId: string, owner: string): SessionRecord =>
  pendingSession({ requestId, phoneNumber: NUMBER, owner }, NOW);

describe('a start recorded after an erasure, while an erased start was still in flight', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  beforeEach(() => {
    store = new MemoryStore({ clock: () => NOW });
    records = recordsOn(store);
  });
  afterEach(() => store.close());

  /** What VerificationErasure.forget does with the index: take it, then mark the subject. */
  async function erase(subject: { phoneNumber: string } | { owner: string }): Promise<string[]> {
    const { ids } = await records.subjects.take(subject);
    await records.subjects.markForgotten(subject, NOW, RECORD_RETENTION_MS);
    return ids;
  }

  it.each([
    ['the day’s first start in flight (slot 0)', 0],
    ['a later start in flight (a counter slot)', 2],
  ])('%s: the next erasure still finds the session recorded after the first', async (_, earlier) => {
    for (let i = 0; i < earlier; i++)
      await records.createAndFollow(
        session(`old-${i}`, 'alice'),
        [],
        undefined,
        await records.reserveIndex({ phoneNumber: NUMBER, owner: 'alice' }),
      );
    // A: reserved before paying; its API call is slow.
    const a = await records.reserveIndex({ phoneNumber: NUMBER, owner: 'alice' });
    // The number is erased meanwhile.
    expect((await erase({ phoneNumber: NUMBER })).length).toBe(earlier);
    // C: started after the erasure, answered first, recorded and indexed.
    const c = await records.reserveIndex({ phoneNumber: NUMBER, owner: 'bob' });
    await expect(records.createAndFollow(session('c', 'bob'), [], undefined, c)).resolves.toBe(true);
    // A's record lands: erased while in flight, it is removed (as it should be)…
    await expect(records.createAndFollow(session('a', 'alice'), [], undefined, a)).resolves.toBe(false);
    await expect(records.get('a')).resolves.toBeNull();
    await expect(records.get('c')).resolves.not.toBeNull();
    // …and the next erasure of the number finds C.
    expect(await erase({ phoneNumber: NUMBER })).toEqual(['c']);
  });
});

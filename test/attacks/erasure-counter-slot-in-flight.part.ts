/**
 * Attack (lane attack-r, the erasure index after 46310f8e/845e12c6/43fb9bf2: src/sessions/subject-index.ts
 * `take`). `take` leaves the day's counter to a start in flight only when it sees a reserved slot 0
 * (the gap ''). A start that reserved a *counter* slot (the day's second start or later: slot 0 was
 * taken already) holds nothing the store shows until its record lands: its slot is absent, not a gap.
 * So: start P (the day's first) is recorded in slot 0; start A reserves the counter's `:1` and waits
 * for the API; the number is erased: `take` finds slot 0 written and `:1` empty, sees nothing in
 * flight and deletes slot 0 *and the counter*. Two starts after the erasure: C claims slot 0 again, D
 * increments the deleted counter and gets `:1`, A's key. D is recorded and indexed there. A's record
 * lands, finds the mark changed and, as an erased start should, deletes its slot keys: `:1`, now D's.
 * D's session is no longer indexed under the number: the next erasure of the number finds no trace of
 * it, and its record (the number, D's owner) outlives that erasure for its whole retention (the
 * session's TTL + 24 h), its handle still open (an erasure of D's owner still finds it). Two instances on one Redis race the same way.
 *
 * The unit spec's case (43fb9bf2: two reservations, slot 0 a gap) holds; attack-q's control case (a
 * counter slot in flight) held only because one start after the erasure took slot 0, not the counter.
 *
 * Expected: every session recorded after an erasure is found by the next one. Medium-High (the same loss
 * as attack-q's High: personal data kept, up to the record's 24 h retention, after the host answered
 * that it was erased, and a repeated erasure does not find it; narrower trigger: a deletion during a
 * start's API latency on a number started earlier that day, and two starts of it recorded before that
 * start's answer lands). Fails on main (43fb9bf2).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { SessionRecord } from '../../src/core/session-record.js';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
} from '../../src/sessions/session-record.repository.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { pendingSession, recordsOn } from '../support/session-records.fixture.js';

const NOW = 1_700_000_000_000;
const NUMBER = '+79123456780';
const session = (requestId: string, owner: string): SessionRecord =>
  pendingSession({ requestId, phoneNumber: NUMBER, owner }, NOW);

const repository = (store: VerificationStore) => recordsOn(store);

describe('an erasure while a start holding a counter slot is in flight', () => {
  const stores: VerificationStore[] = [];
  const prefixes: string[] = [];
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    const admin = new Redis(sharedRedisUrl());
    for (const prefix of prefixes.splice(0)) {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
    }
    admin.disconnect();
  });

  /** Instance `a` runs the slow start; instance `b` (the same one for Memory) erases and starts after. */
  async function race(a: SessionRecordRepository, b: SessionRecordRepository): Promise<void> {
    /** What VerificationErasure.forget does with the index: take it, then mark the subject. */
    const erase = async (subject: { phoneNumber: string } | { owner: string }) => {
      const { ids } = await b.subjects.take(subject);
      await b.subjects.markForgotten(subject, NOW, RECORD_RETENTION_MS);
      return ids.sort();
    };
    const start = async (repo: SessionRecordRepository, id: string, owner: string) =>
      repo.createAndFollow(
        session(id, owner),
        [],
        undefined,
        await repo.reserveIndex({ phoneNumber: NUMBER, owner }),
      );
    // The day's first start: recorded in slot 0.
    await expect(start(b, 'p', 'paula')).resolves.toBe(true);
    // A: the day's second start, a counter slot reserved before paying; its API call is slow.
    const a1 = await a.reserveIndex({ phoneNumber: NUMBER, owner: 'alice' });
    // The number is erased meanwhile: P found.
    expect(await erase({ phoneNumber: NUMBER })).toEqual(['p']);
    // C and D start after the erasure, answered first: recorded and indexed.
    await expect(start(b, 'c', 'carol')).resolves.toBe(true);
    await expect(start(b, 'd', 'dave')).resolves.toBe(true);
    // A's record lands: erased while in flight, it is removed (as it should be)…
    await expect(a.createAndFollow(session('a', 'alice'), [], undefined, a1)).resolves.toBe(false);
    await expect(b.get('a')).resolves.toBeNull();
    // …and the next erasure of the number finds D (its record, the number and its owner, is still kept).
    await expect(b.get('d')).resolves.not.toBeNull();
    expect(await erase({ phoneNumber: NUMBER })).toEqual(['c', 'd']);
  }

  it('one MemoryStore instance', async () => {
    const store = new MemoryStore({ clock: () => NOW });
    stores.push(store);
    const repo = repository(store);
    await race(repo, repo);
  });

  it('two instances on one Redis', async () => {
    const keyPrefix = `attack-r:${randomUUID()}:`;
    prefixes.push(keyPrefix);
    const [a, b] = [0, 1].map(() => new RedisStore({ url: sharedRedisUrl(), keyPrefix, clock: () => NOW }));
    stores.push(a!, b!);
    await race(repository(a!), repository(b!));
  });
});

/**
 * Attack (lane attack-r, the erasure index's days: src/sessions/subject-index.ts `take`, the clock at its
 * bounds). The index names each slot by the UTC day of the instance that reserved it (`<tag>:<day>:<i>`),
 * and `take` reads today and the days before it, never the day after. Two instances on one store whose
 * clocks differ by a second (the module allows for a minute elsewhere: range-bursts' MARK_SLACK_MS, "for
 * instances whose clocks disagree"): a start recorded just after midnight on the instance whose clock is
 * ahead sits under tomorrow's day for the instance still before midnight. An erasure asked on that
 * instance in that second does not find it: the session's record (the number, its owner) is kept after
 * the host answered the deletion request, for its TTL and the 24 h retention, and its handle still
 * opens; a second erasure, minutes later, finds it. The day's keys predate the last session (pre-existing
 * since the index was keyed by day); slot 0 and the counter (a3ff0cea, 46310f8e) read the same days.
 *
 * Expected: an erasure finds every session recorded before it, whatever the second of the day and the
 * instances' clocks within the slack the module allows. Low (a window of the clocks' skew around 00:00
 * UTC; the record is found by any later erasure). Fails on main (43fb9bf2).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { DAY_MS } from '../../src/core/clock.js';
import { RedisStore } from '../../src/store/redis.store.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { pendingSession, recordsOn } from '../support/session-records.fixture.js';

/** A UTC midnight. */
const MIDNIGHT = Math.ceil(1_700_000_000_000 / DAY_MS) * DAY_MS;
const NUMBER = '+79123456781';

describe('an erasure a second before midnight, on an instance whose clock is a second behind', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0)) await step();
  });

  it('finds the session the other instance recorded a second after midnight (its clock)', async () => {
    const keyPrefix = `attack-r:${randomUUID()}:`;
    const instance = (clock: () => number) => {
      const store = new RedisStore({ url: sharedRedisUrl(), keyPrefix, clock });
      cleanup.push(() => store.close());
      return recordsOn(store);
    };
    cleanup.push(async () => {
      const admin = new Redis(sharedRedisUrl());
      const keys = await admin.keys(`${keyPrefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      admin.disconnect();
    });
    // The same moment: 00:00:00.500 on the instance ahead, 23:59:59.500 on the one behind.
    const ahead = instance(() => MIDNIGHT + 500);
    const behind = instance(() => MIDNIGHT - 500);
    const record = pendingSession(
      { requestId: 'after-midnight', phoneNumber: NUMBER, owner: 'alice' },
      MIDNIGHT + 500,
    );
    const reserved = await ahead.reserveIndex({ phoneNumber: NUMBER, owner: 'alice' });
    await expect(ahead.createAndFollow(record, [], undefined, reserved)).resolves.toBe(true);
    // The erasure, asked on the instance behind: its record is readable there…
    await expect(behind.get('after-midnight')).resolves.not.toBeNull();
    // …and the index it reads finds it, by number and by owner.
    expect((await behind.subjects.take({ phoneNumber: NUMBER })).ids).toEqual(['after-midnight']);
    expect((await behind.subjects.take({ owner: 'alice' })).ids).toEqual(['after-midnight']);
  });
});

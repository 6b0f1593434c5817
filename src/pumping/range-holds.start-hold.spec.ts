/**
 * A pumping hold's record (RangeHolds.startHold through RangeStats): started once however many starts read the
 * same state, on MemoryStore and RedisStore; remembered two windows past its cool-off; as evictable as its subject.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { RedisStore } from '../store/redis.store.js';
import { hostStoreOf } from '../../test/support/host-store.js';
import { sharedRedisUrl } from '../../test/support/redis-server.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { RangeStats, type StatsSubject } from './range-stats.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The start of an hour window (and of a day). */
const MIDNIGHT = Date.UTC(2026, 0, 2);

const range: StatsSubject = { id: 'range:+7916123' };
const owner: StatsSubject = { id: 'owner:user-1' };

describe('RangeStats holds', () => {
  const clock = { now: MIDNIGHT };
  const stores: (MemoryStore | RedisStore)[] = [];
  const stats = (
    store: MemoryStore | RedisStore = new MemoryStore({ clock: () => clock.now }),
  ): RangeStats => {
    stores.push(store);
    return new RangeStats(store, { windowMs: HOUR, recordTtlMs: DAY }, SPEC_DATA_KEYS);
  };
  afterEach(async () => {
    clock.now = MIDNIGHT;
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('starts a hold once: a second start without the first one read loses, one that read it takes over', async () => {
    const rs = stats();
    expect((await rs.readHolds([range])).get(range.id)).toBeUndefined();
    expect(await rs.startHold(range.id, undefined, 0, 900_000)).toBe(true);
    expect(await rs.startHold(range.id, undefined, 0, 900_000)).toBe(false);
    const first = (await rs.readHolds([range])).get(range.id);
    expect(first).toStrictEqual({ until: MIDNIGHT + 900_000, level: 0 });

    clock.now += 1000;
    expect(await rs.startHold(range.id, first, 1, 1_800_000)).toBe(true);
    const second = (await rs.readHolds([range])).get(range.id);
    expect(second).toStrictEqual({ until: clock.now + 1_800_000, level: 1 });
    // Another instance still holding the first state read loses to the one that moved on.
    expect(await rs.startHold(range.id, first, 1, 1_800_000)).toBe(false);
    expect((await rs.readHolds([range])).get(range.id)).toStrictEqual(second);
    expect((await rs.readHolds([owner])).get(owner.id)).toBeUndefined();
  });

  it('two starts that read the same hold (past its cool-off) start the next one once: one of them reports it', async () => {
    for (const store of [
      new MemoryStore({ clock: () => clock.now }),
      new RedisStore({ url: sharedRedisUrl(), clock: () => clock.now, keyPrefix: `holds:${randomUUID()}:` }),
    ]) {
      const rs = stats(store);
      await rs.startHold(range.id, undefined, 0, 900_000);
      const first = (await rs.readHolds([range])).get(range.id);
      clock.now = MIDNIGHT + 900_000;
      const won = await Promise.all([1, 2, 3].map(() => rs.startHold(range.id, first, 1, 1_800_000)));
      expect(won.filter(Boolean)).toHaveLength(1);
      expect((await rs.readHolds([range])).get(range.id)).toStrictEqual({
        until: clock.now + 1_800_000,
        level: 1,
      });
      clock.now = MIDNIGHT;
    }
  });

  it('a range’s hold stays evictable once it takes over from the one before (a bounded store may drop it for another caller’s)', async () => {
    const store = new MemoryStore({ clock: () => clock.now, maxEvictableEntries: 1 });
    const rs = stats(store);
    await rs.startHold(range.id, undefined, 0, 900_000);
    clock.now += 1000;
    expect(await rs.startHold(range.id, (await rs.readHolds([range])).get(range.id), 1, 900_000)).toBe(true);
    // Another caller's evictable entry takes the only evictable place: the range's hold makes room.
    await store.set('another-caller', '1', HOUR, { evictable: true });
    expect((await rs.readHolds([range])).get(range.id)).toBeUndefined();
  });

  it('a range’s first hold is evictable too: another caller’s evictable entry makes it room in a bounded store', async () => {
    const store = new MemoryStore({ clock: () => clock.now, maxEvictableEntries: 1 });
    const rs = stats(store);
    expect(await rs.startHold(range.id, undefined, 0, 900_000)).toBe(true);
    await store.set('another-caller', '1', HOUR, { evictable: true });
    expect((await rs.readHolds([range])).get(range.id)).toBeUndefined();
    await expect(store.get('another-caller')).resolves.toBe('1');
  });

  it('a hold is remembered two windows past its cool-off, so a pattern that goes on gets a longer one', async () => {
    const rs = stats();
    await rs.startHold(range.id, undefined, 0, 900_000);
    clock.now += 900_000 + 2 * HOUR - 1;
    expect((await rs.readHolds([range])).get(range.id)).toStrictEqual({
      until: MIDNIGHT + 900_000,
      level: 0,
    });
    clock.now += 1;
    expect((await rs.readHolds([range])).get(range.id)).toBeUndefined();
    // A hold that expired since it was read starts again.
    expect(await rs.startHold(range.id, { until: MIDNIGHT + 900_000, level: 0 }, 1, 900_000)).toBe(true);
  });

  it('on a host’s store without replaceIfEquals (a read, then the write), a hold past its cool-off is taken over until a second before its record ends, then started afresh', async () => {
    const inner = new MemoryStore({ clock: () => clock.now });
    stores.push(inner);
    const host = hostStoreOf(inner);
    const rs = new RangeStats(host, { windowMs: HOUR, recordTtlMs: DAY }, SPEC_DATA_KEYS);
    await rs.startHold(range.id, undefined, 0, 900_000);
    const first = (await rs.readHolds([range])).get(range.id);
    // The record ends two windows past the cool-off.
    clock.now = MIDNIGHT + 900_000 + 2 * HOUR - 1001;
    expect(await rs.startHold(range.id, first, 1, 900_000)).toBe(true);
    expect((await rs.readHolds([range])).get(range.id)).toStrictEqual({
      until: clock.now + 900_000,
      level: 1,
    });
    const second = (await rs.readHolds([range])).get(range.id)!;
    clock.now = second.until + 2 * HOUR;
    expect(await rs.startHold(range.id, second, 2, 900_000)).toBe(true);
  });
});

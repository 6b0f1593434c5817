import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { RangeStats, type StatsSubject } from './range-stats.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { pumpKey, PUMP } from './range-stats-keys.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The start of an hour window (and of a day). */
const MIDNIGHT = Date.UTC(2026, 0, 2);

const range: StatsSubject = { id: 'range:+7916123' };
const country: StatsSubject = { id: 'country:RU' };
const owner: StatsSubject = { id: 'owner:user-1' };

describe('RangeStats', () => {
  const clock = { now: MIDNIGHT };
  const stores: MemoryStore[] = [];
  const stats = (store = new MemoryStore({ clock: () => clock.now })): RangeStats => {
    stores.push(store);
    return new RangeStats(store, { windowMs: HOUR, recordTtlMs: DAY }, SPEC_DATA_KEYS);
  };
  afterEach(async () => {
    clock.now = MIDNIGHT;
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it("counts every start for every subject, a number's repeated starts too (money, not numbers)", async () => {
    const rs = stats();
    await rs.countStart([range, country, owner]);
    await rs.countStart([range, country, owner]);
    await rs.countStart([range, country, owner]);
    const counts = await rs.read([range, country, owner]);
    expect(counts.get(range.id)).toMatchObject({
      starts: 3,
      verified: 0,
      known: false,
      baseline: 0,
      current: 3,
    });
    expect(counts.get(country.id)).toMatchObject({ starts: 3, verified: 0 });
    expect(counts.get(owner.id)).toStrictEqual({
      starts: 3,
      verified: 0,
      known: false,
      current: 3,
      raw: { at: clock.now, windowMs: HOUR, starts: [3, 0], verified: [0, 0], callers: [0, 0], deducted: 0 },
    });
  });

  it('reads a counter taken back below 0 (its take-back outlived the start it counted) as 0', async () => {
    const store = new MemoryStore({ clock: () => clock.now });
    const rs = stats(store);
    const w = Math.floor(clock.now / HOUR);
    await store.set(pumpKey(PUMP.starts, SPEC_DATA_KEYS.digest(owner.id), w), '-2', 2 * HOUR);
    expect((await rs.read([owner])).get(owner.id)).toMatchObject({
      starts: 0,
      current: 0,
      raw: { starts: [0, 0] },
    });
  });

  it("takes a number's own starts, up to OWNER_RETRIES, out of its range's and prefix's count when it is judged", async () => {
    const rs = stats();
    const prefix: StatsSubject = { id: 'prefix:+7916' };
    for (let i = 0; i < 2; i++) await rs.countStart([range, prefix, owner], '+79161234567');
    let counts = await rs.read([range, prefix, owner], '+79161234567');
    expect([counts.get(range.id)?.starts, counts.get(prefix.id)?.starts]).toStrictEqual([0, 0]);
    expect(counts.get(owner.id)?.starts).toBe(2);
    // Another number sees them all.
    expect((await rs.read([range], '+79161234568')).get(range.id)?.starts).toBe(2);
    // Past OWNER_RETRIES, the number's starts weigh for itself too.
    for (let i = 0; i < 5; i++) await rs.countStart([range, prefix, owner], '+79161234567');
    counts = await rs.read([range, prefix], '+79161234567');
    expect([counts.get(range.id)?.starts, counts.get(prefix.id)?.starts]).toStrictEqual([4, 4]);
  });

  it('answers the count before each start atomically: concurrent starts are told apart', async () => {
    const rs = stats();
    const counted = await Promise.all(Array.from({ length: 5 }, () => rs.countStart([range])));
    expect(counted.map((c) => c.before.get(range.id)).sort()).toStrictEqual([0, 1, 2, 3, 4]);
  });

  describe('burst marks taken ahead (markBursts)', () => {
    const prefix: StatsSubject = { id: 'prefix:+7916' };
    const phone = '+79161234567';

    it('a start marked new is counted: each distinct caller once, answered atomically', async () => {
      const rs = stats();
      const marks = await rs.markBursts([range, prefix, owner], phone, 'client:a');
      expect([...marks.ids].sort()).toStrictEqual([prefix.id, range.id]);
      const first = await rs.countStart([range, prefix, owner], phone, 'client:a', [], marks);
      expect(first.callersBefore).toStrictEqual(
        new Map([
          [range.id, 0],
          [prefix.id, 0],
        ]),
      );
      const next = await rs.markBursts([range, prefix], '+79161234568', 'client:b');
      const second = await rs.countStart([range, prefix], '+79161234568', 'client:b', [], next);
      expect(second.callersBefore).toStrictEqual(
        new Map([
          [range.id, 1],
          [prefix.id, 1],
        ]),
      );
      expect((await rs.read([range])).get(range.id)?.currentCallers).toBe(2);
    });

    it('concurrent starts of one number are counted once, and none is told of the others (no range held on them)', async () => {
      const rs = stats();
      const counted = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const marks = await rs.markBursts([range], phone, `client:${i}`);
          return rs.countStart([range], phone, `client:${i}`, [], marks);
        }),
      );
      expect(counted.map((c) => c.callersBefore.get(range.id)).filter((b) => b !== undefined)).toStrictEqual([
        0,
      ]);
      expect((await rs.read([range])).get(range.id)?.currentCallers).toBe(1);
    });

    it("a number's mark is no start of its own: its starts marked and counted are deducted as many, in their window and the next", async () => {
      const rs = stats();
      for (const [number, caller] of [
        [phone, 'client:a'],
        [phone, 'client:b'],
        ['+79161234568', 'client:c'],
        ['+79161234569', 'client:d'],
      ] as const)
        await rs.countStart([range], number, caller, [], await rs.markBursts([range], number, caller));
      // Four starts in the range, two of them the judged number's own (OWNER_RETRIES: 3).
      expect((await rs.read([range], phone)).get(range.id)?.starts).toBe(2);
      // Half into the next window: half of each count.
      clock.now += HOUR + HOUR / 2;
      expect((await rs.read([range], phone)).get(range.id)?.starts).toBe(1);
    });

    it('marks read by a start refused with them leave the number and the caller new', async () => {
      const rs = stats();
      const refused = await rs.markBursts([range], phone, 'client:a');
      await refused.release();
      await (await rs.markBursts([range], phone, 'client:b')).release();
      // Neither holds anything: the next start of the number, by either caller, is counted.
      const marks = await rs.markBursts([range], phone, 'client:a');
      const counted = await rs.countStart([range], phone, 'client:a', [], marks);
      expect(counted.callersBefore).toStrictEqual(new Map([[range.id, 0]]));
      const again = await rs.markBursts([range], phone, 'client:c');
      expect(again.ids.size).toBe(0);
      expect((await rs.countStart([range], phone, 'client:c', [], again)).callersBefore).toStrictEqual(
        new Map(),
      );
      expect((await rs.read([range])).get(range.id)?.currentCallers).toBe(1);
    });

    it('a start marked known writes no burst count; one whose window rolled over since is marked again and counted', async () => {
      const store = new MemoryStore({ clock: () => clock.now });
      const rs = stats(store);
      await rs.countStart([range], phone, 'client:a');
      const known = await rs.markBursts([range], phone, 'client:a');
      expect(known.ids.size).toBe(0);
      const increments = jest.spyOn(store, 'increment');
      await rs.countStart([range], phone, 'client:a', [], known);
      expect(increments.mock.calls.filter(([key]) => key.startsWith('protect:pump:c:'))).toStrictEqual([]);
      increments.mockRestore();
      clock.now += HOUR;
      const counted = await rs.countStart([range], phone, 'client:a', [], known);
      expect(counted.callersBefore).toStrictEqual(new Map([[range.id, 0]]));
    });

    it("a mark is kept to its window's end and a minute (clocks that disagree), then not kept", async () => {
      // The minute itself, not the constant: instances' clocks a minute apart still read the mark.
      const MINUTE = 60_000;
      const store = new MemoryStore({ clock: () => clock.now });
      const rs = stats(store);
      const mark = pumpKey(PUMP.caller, SPEC_DATA_KEYS.digest(`${range.id}\nclient:a`), MIDNIGHT / HOUR);
      clock.now = MIDNIGHT + 10 * 60_000;
      await rs.countStart([range], phone, 'client:a');
      clock.now = MIDNIGHT + HOUR - 1;
      expect((await rs.markBursts([range], '+79161234599', 'client:a')).ids.size).toBe(0);
      clock.now = MIDNIGHT + HOUR + MINUTE - 1;
      await expect(store.get(mark)).resolves.toBe('1');
      clock.now = MIDNIGHT + HOUR + MINUTE;
      await expect(store.get(mark)).resolves.toBeNull();
    });
  });

  it('a start taken back no longer counts; taking it back twice takes it once', async () => {
    const rs = stats();
    const first = await rs.countStart([range, owner]);
    await rs.countStart([range, owner]);
    await first.release();
    await first.release();
    const counts = await rs.read([range, owner]);
    expect([counts.get(range.id)?.starts, counts.get(owner.id)?.starts]).toStrictEqual([1, 1]);
  });

  it('reads one sliding window: the previous window weighs by the share of it still inside', async () => {
    const rs = stats();
    for (let i = 0; i < 8; i++) await rs.countStart([owner]);
    await rs.countVerified([owner.id], '+79161234567');
    await rs.countVerified([owner.id], '+79161234568');
    clock.now += HOUR + HOUR / 4;
    await rs.countStart([owner]);
    const counts = (await rs.read([owner])).get(owner.id);
    // 1 now + 8 × 3/4 of the last hour; verified 2 × 3/4.
    // The raw windows it was read from (a hold's Retry-After rolls them on).
    expect(counts).toStrictEqual({
      starts: 7,
      verified: 1.5,
      known: true,
      current: 1,
      raw: { at: clock.now, windowMs: HOUR, starts: [1, 8], verified: [0, 2], callers: [0, 0], deducted: 0 },
    });
    clock.now += HOUR;
    expect((await rs.read([owner])).get(owner.id)).toMatchObject({ starts: 0.75, verified: 0 });
  });

  it('counts a number verified again in the window once: faked conversions do not multiply', async () => {
    const rs = stats();
    for (let i = 0; i < 8; i++) await rs.countVerified([range.id, owner.id], '+79161234567');
    await rs.countVerified([range.id, owner.id], '+79161234568');
    expect((await rs.read([range])).get(range.id)?.verified).toBe(2);
    // The next window is another proof.
    clock.now += HOUR;
    await rs.countVerified([range.id], '+79161234567');
    expect((await rs.read([range])).get(range.id)?.verified).toBe(3);
  });

  it("a range's baseline is its previous day's distinct verified numbers per window; starts never raise it", async () => {
    const rs = stats();
    for (let i = 0; i < 200; i++) await rs.countStart([range, owner]);
    for (let i = 0; i < 48; i++)
      await rs.countVerified([range.id, owner.id], `+7916123${String(i).padStart(4, '0')}`);
    clock.now += DAY;
    const counts = await rs.read([range, owner]);
    expect(counts.get(range.id)?.baseline).toBe(2);
    expect(counts.get(owner.id)?.baseline).toBeUndefined();
    clock.now += DAY;
    expect((await rs.read([range])).get(range.id)?.baseline).toBe(0);
  });

  it("a prefix's and country's day: every start, distinct numbers verified, and distinct ranges verified in (their history and baseline)", async () => {
    const rs = stats();
    const prefix: StatsSubject = { id: 'prefix:+7916' };
    const farm = (i: number) => `+7916123${String(i).padStart(4, '0')}`;
    for (let i = 0; i < 30; i++) await rs.countStart([range, prefix, country]);
    // A farm: 50 numbers of one range, each verified in two windows; then one number of another range.
    for (let i = 0; i < 50; i++) await rs.countVerified([range.id, prefix.id, country.id], farm(i));
    clock.now += 2 * HOUR;
    for (let i = 0; i < 50; i++) await rs.countVerified([range.id, prefix.id, country.id], farm(i));
    await rs.countVerified(['range:+7916999', prefix.id, country.id], '+79169990000');
    let counts = (await rs.read([range, prefix, country])).get(prefix.id)!;
    expect(counts.day).toMatchObject({ starts: 30, verified: 51, baseline: 0 });
    expect(counts.ranges).toBe(2);
    expect((await rs.read([range])).get(range.id)?.day).toBeUndefined();
    // The next day: yesterday's weighs by what is left of it; its ranges are the baseline.
    clock.now = MIDNIGHT + DAY + 6 * HOUR;
    counts = (await rs.read([prefix])).get(prefix.id)!;
    expect(counts.day?.starts).toBeCloseTo(30 * 0.75);
    expect(counts.day?.verified).toBeCloseTo(51 * 0.75);
    expect(counts.day?.baseline).toBe(2);
    expect(counts.baseline).toBeCloseTo((2 * HOUR) / DAY);
    expect(counts.ranges).toBe(2);
  });

  it("a country's twins keep its day: yesterday's proofs count in their day as in the country's", async () => {
    const rs = stats();
    const twins: StatsSubject[] = [{ id: 'country:RU#fine' }, { id: 'country:RU#all' }];
    for (let i = 0; i < 4; i++) await rs.countVerified([...twins.map((t) => t.id)], `+791${i}1230000`);
    clock.now = MIDNIGHT + DAY + 6 * HOUR;
    const counts = await rs.read(twins);
    for (const twin of twins) {
      expect(counts.get(twin.id)?.day?.verified).toBe(4 * 0.75);
    }
  });

  it('a completed verification makes a caller known for recordTtlMs; a range is never vouched for that way', async () => {
    const rs = stats();
    await rs.countVerified([range.id, owner.id], '+79161234567');
    let counts = await rs.read([range, owner]);
    expect(counts.get(range.id)).toMatchObject({ verified: 1, known: false });
    expect(counts.get(owner.id)).toMatchObject({ verified: 1, known: true });
    clock.now += DAY - 1;
    expect((await rs.read([owner])).get(owner.id)?.known).toBe(true);
    clock.now += 1;
    counts = await rs.read([owner]);
    expect(counts.get(owner.id)?.known).toBe(false);
  });

  it("remembers a session's subjects until it is taken, once", async () => {
    const store = new MemoryStore({ clock: () => clock.now });
    const rs = stats(store);
    await rs.rememberSession('req-1', [range.id, owner.id], 600_000);
    // The owner as its tag (what its counters are named by), the range as it is.
    expect(await rs.takeSession('req-1', '+79161234567')).toStrictEqual([
      range.id,
      `~${SPEC_DATA_KEYS.digest(owner.id)}`,
    ]);
    expect(await rs.takeSession('req-1', '+79161234567')).toBeUndefined();
    await rs.rememberSession('req-2', [range.id], 600_000);
    clock.now += 600_000;
    expect(await rs.takeSession('req-2', '+79161234567')).toBeUndefined();
  });

  it('a flood of ranges evicts only evictable counters: a country keeps its counts', async () => {
    const store = new MemoryStore({ clock: () => clock.now, maxEvictableEntries: 10 });
    const rs = stats(store);
    await rs.countStart([country]);
    for (let i = 0; i < 50; i++) await rs.countStart([{ id: `range:+79${i}` }]);
    await rs.countVerified([country.id], '+79160000000');
    for (let i = 0; i < 50; i++)
      await rs.countVerified([`owner:${i}`], `+7916000${String(i).padStart(4, '0')}`);
    const counts = (await rs.read([country])).get(country.id);
    expect(counts).toMatchObject({ starts: 1, verified: 1, baseline: 0 });
  });
});

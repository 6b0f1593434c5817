import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { RangeStats } from './range-stats.js';
import { burstStats, prefix, range } from '../../test/support/range-bursts.fixture.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { dumpMemoryStore } from '../../test/support/store-dump.js';

const phone = '+79161234567';

describe('RangeBursts: a start counted ahead, and the number counted by another start', () => {
  const stats = burstStats();

  it('the start that went first, its number counted by another first, takes back what it counted: its caller is new for its next number', async () => {
    const rs = stats();
    const first = await rs.markBursts([range, prefix], phone, 'client:a');
    const second = await rs.markBursts([range, prefix], phone, 'client:b');
    expect([first.ids.size, second.ids.size]).toStrictEqual([2, 0]);
    // The second is counted first: the number is new where it is counted.
    const b = await rs.countStart([range, prefix], phone, 'client:b', [], second);
    expect(b.callersBefore).toStrictEqual(
      new Map([
        [range.id, 0],
        [prefix.id, 0],
      ]),
    );
    const a = await rs.countStart([range, prefix], phone, 'client:a', [], first);
    expect(a.callersBefore).toStrictEqual(new Map());
    expect((await rs.read([range])).get(range.id)?.currentCallers).toBe(1);
    // client:a was counted nowhere: its start of a new number counts it.
    const next = '+79161234568';
    const c = await rs.countStart(
      [range, prefix],
      next,
      'client:a',
      [],
      await rs.markBursts([range, prefix], next, 'client:a'),
    );
    expect(c.callersBefore).toStrictEqual(
      new Map([
        [range.id, 1],
        [prefix.id, 1],
      ]),
    );
    const counts = (await rs.read([range, prefix])).get(prefix.id)!;
    expect({ current: counts.current, callers: counts.currentCallers }).toStrictEqual({
      current: 3,
      callers: 2,
    });
  });

  it('a caller already counted is not counted again for a new number, whether it went first or not', async () => {
    const rs = stats();
    await rs.countStart([range], phone, 'client:a', [], await rs.markBursts([range], phone, 'client:a'));
    const next = await rs.markBursts([range], '+79161234568', 'client:a');
    expect(next.ids.size).toBe(0);
    expect((await rs.countStart([range], '+79161234568', 'client:a', [], next)).callersBefore).toStrictEqual(
      new Map(),
    );
    // Without marks read (a start the reading condemned): the caller's mark is found where it is counted.
    expect((await rs.countStart([range], '+79161234569', 'client:a')).callersBefore).toStrictEqual(new Map());
    expect((await rs.read([range])).get(range.id)?.currentCallers).toBe(1);
  });
});

describe('RangeBursts: the previous window’s callers', () => {
  it('still weigh in the next window’s sliding count past an hour after they were counted', async () => {
    const HOUR = 3_600_000;
    let now = Date.UTC(2026, 0, 2) + 60_000;
    const store = new MemoryStore({ clock: () => now });
    try {
      const rs = new RangeStats(store, { windowMs: HOUR, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
      for (const [i, caller] of ['client:a', 'client:b', 'client:c'].entries()) {
        const number = `+7916123450${i}`;
        await rs.countStart([range], number, caller, [], await rs.markBursts([range], number, caller));
      }
      expect((await rs.read([range])).get(range.id)?.currentCallers).toBe(3);
      // Half-way through the next window, 90 minutes after they were counted: half of the three weigh in.
      now += HOUR + 30 * 60_000 - 60_000;
      expect((await rs.read([range])).get(range.id)?.callers).toBeCloseTo(1.5);
    } finally {
      await store.close();
    }
  });
});

describe('RangeBursts: marks read in a window that rolled over before the start was counted', () => {
  it('are no longer trusted: the caller new to each subject in the window it is counted in is counted there', async () => {
    const HOUR = 3_600_000;
    let now = Date.UTC(2026, 0, 2) + 60_000;
    const store = new MemoryStore({ clock: () => now });
    try {
      const rs = new RangeStats(store, { windowMs: HOUR, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
      // client:a is counted in the prefix (through another range of it) in this window.
      const other = { id: 'range:+7916999' };
      const elsewhere = '+79169990000';
      await rs.countStart(
        [other, prefix],
        elsewhere,
        'client:a',
        [],
        await rs.markBursts([other, prefix], elsewhere, 'client:a'),
      );
      // Its next start reads its marks: new to the range, not to the prefix.
      const marks = await rs.markBursts([range, prefix], phone, 'client:a');
      expect([...marks.ids]).toStrictEqual([range.id]);
      // The window rolls over before the start is counted: in the new one, it is new to both.
      now += HOUR;
      const counted = await rs.countStart([range, prefix], phone, 'client:a', [], marks);
      expect(counted.callersBefore).toStrictEqual(
        new Map([
          [range.id, 0],
          [prefix.id, 0],
        ]),
      );
      expect((await rs.read([prefix])).get(prefix.id)?.currentCallers).toBe(1);
    } finally {
      await store.close();
    }
  });
});

describe('RangeBursts: a start without a caller, a number or a range', () => {
  const HOUR = 3_600_000;
  const opened: MemoryStore[] = [];
  afterEach(async () => Promise.all(opened.splice(0).map((s) => s.close())));
  function statsOnStore() {
    const store = new MemoryStore({ clock: () => Date.UTC(2026, 0, 2) + 60_000 });
    opened.push(store);
    return { store, rs: new RangeStats(store, { windowMs: HOUR, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS) };
  }
  /** The store's burst entries: callers counted per subject, and callers marked seen. */
  const burstEntries = (store: MemoryStore) =>
    dumpMemoryStore(store)
      .map((line) => line.split(' ')[0]!)
      .filter((key) => /pump:(c|cm):/.test(key));

  it('reads no marks and writes nothing before it is counted', async () => {
    const { store, rs } = statsOnStore();
    const country = { id: 'country:RU' };
    for (const marks of [
      await rs.markBursts([range, prefix], phone, undefined),
      await rs.markBursts([range, prefix], undefined, 'client:a'),
      await rs.markBursts([country], phone, 'client:a'),
    ])
      expect({ first: marks.first, ids: [...marks.ids] }).toStrictEqual({ first: false, ids: [] });
    expect(dumpMemoryStore(store)).toStrictEqual([]);
  });

  it('without a caller (a host’s own start) counts its number in the range, and no caller there', async () => {
    const { store, rs } = statsOnStore();
    const marks = await rs.markBursts([range, prefix], phone, undefined);
    const counted = await rs.countStart([range, prefix], phone, undefined, [], marks);
    expect(counted.callersBefore).toStrictEqual(new Map());
    const counts = (await rs.read([range])).get(range.id)!;
    expect({ current: counts.current, callers: counts.currentCallers ?? 0 }).toStrictEqual({
      current: 1,
      callers: 0,
    });
    expect(burstEntries(store)).toStrictEqual([]);
  });

  it('a country is no burst subject: its start counts and marks the caller in the range alone', async () => {
    const { store, rs } = statsOnStore();
    const country = { id: 'country:RU' };
    const marks = await rs.markBursts([range, country], phone, 'client:a');
    const counted = await rs.countStart([range, country], phone, 'client:a', [], marks);
    expect(counted.callersBefore).toStrictEqual(new Map([[range.id, 0]]));
    // Without marks read (a start the reading condemned), the same.
    const next = '+79161234568';
    const unread = await rs.countStart([prefix, country], next, 'client:b');
    expect(unread.callersBefore).toStrictEqual(new Map([[prefix.id, 0]]));
    // Each start's caller count and the caller's mark, in its range or prefix: nothing of the country.
    expect(burstEntries(store)).toHaveLength(4);
  });

  it('one caller’s two numbers read their marks before either is counted: the caller counts once, and not again after', async () => {
    const { rs } = statsOnStore();
    const [x, y, z] = ['+79161234501', '+79161234502', '+79161234503'];
    const [mx, my] = await Promise.all([
      rs.markBursts([range], x, 'client:a'),
      rs.markBursts([range], y, 'client:a'),
    ]);
    expect([mx.ids.size, my.ids.size]).toStrictEqual([1, 1]);
    const cx = await rs.countStart([range], x, 'client:a', [], mx);
    const cy = await rs.countStart([range], y, 'client:a', [], my);
    expect([cx.callersBefore, cy.callersBefore]).toStrictEqual([new Map([[range.id, 0]]), new Map()]);
    // Its next number finds its mark: not a new caller.
    const cz = await rs.countStart([range], z, 'client:a', [], await rs.markBursts([range], z, 'client:a'));
    expect(cz.callersBefore).toStrictEqual(new Map());
    expect((await rs.read([range])).get(range.id)).toMatchObject({ current: 3, currentCallers: 1 });
  });
});

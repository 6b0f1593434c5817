import { afterEach, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { MemoryStore } from '../../src/store/memory.store.js';
import { describeStoreContract, TestClock } from './store-contract.js';
import { settledHeapUsed } from '../hardening/support/heap.js';
import { dumpMemoryStore } from '../support/store-dump.js';

describeStoreContract('MemoryStore', {
  sharesState: false,
  create: async (clock, _namespace, maxEntries) => new MemoryStore({ clock, maxEntries }),
});

describe('MemoryStore bounds and sweeping', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it('evicts the entry written least recently when full', async () => {
    const store = new MemoryStore({ maxEntries: 3 });
    await store.set('a', '1', 60_000);
    await store.set('b', '2', 60_000);
    await store.set('c', '3', 60_000);
    await store.set('a', '1 again', 60_000);
    await store.set('d', '4', 60_000);
    expect(store.entryCount).toBe(3);
    await expect(store.get('b')).resolves.toBeNull();
    await expect(store.get('a')).resolves.toBe('1 again');
    await expect(store.get('c')).resolves.toBe('3');
    await expect(store.get('d')).resolves.toBe('4');
    await store.close();
  });

  it('keeps evicting the least recently written entry through a long stream of new keys, rewrites and deletes', async () => {
    const store = new MemoryStore({ maxEntries: 50, maxEvictableEntries: 50 });
    const kept: string[] = []; // the model: least recently written first
    const write = async (key: string) => {
      await store.set(key, key, 60_000);
      if (kept.includes(key)) kept.splice(kept.indexOf(key), 1);
      kept.push(key);
      if (kept.length > 50) kept.shift();
    };
    for (let i = 0; i < 5_000; i++) {
      await write(`new:${i}`);
      if (i % 7 === 0) await write(kept[kept.length >> 1]!); // a rewrite moves a key to the newest
      if (i % 11 === 0) {
        const gone = kept.splice(3, 1)[0]!;
        await store.delete(gone);
      }
      // Many addresses' counters at once: the evictable class is bounded and churned on its own.
      await store.increment(`client:${i}`, 1, 60_000, { evictable: true });
    }
    expect(store.entryCount).toBe(kept.length + 50);
    for (const key of kept) await expect(store.get(key)).resolves.toBe(key);
    await expect(store.get('client:4950')).resolves.toBe('1');
    await expect(store.get('client:4949')).resolves.toBeNull();
    await store.close();
  });

  it('evicts evictable entries only among themselves, each class within its own bound', async () => {
    const store = new MemoryStore({ maxEntries: 2, maxEvictableEntries: 3 });
    await store.set('session', 's', 60_000);
    await store.set('cooldown', 'c', 60_000);
    for (let i = 0; i < 5; i++) await store.increment(`client:${i}`, 1, 60_000, { evictable: true });
    expect(store.entryCount).toBe(5);
    await expect(store.get('session')).resolves.toBe('s');
    await expect(store.get('cooldown')).resolves.toBe('c');
    await expect(store.get('client:1')).resolves.toBeNull();
    await expect(store.get('client:2')).resolves.toBe('1');
    // A kept write past its own bound evicts the oldest kept entry, never a client counter.
    await store.set('limit', 'l', 60_000);
    await expect(store.get('session')).resolves.toBeNull();
    await expect(store.get('client:2')).resolves.toBe('1');
    expect(store.entryCount).toBe(5);
    await store.close();
  });

  it('bounds each due-queue, evicting the member scheduled least recently', async () => {
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now, maxEntries: 2 });
    await store.schedule('q', 'a', clock.now());
    await store.schedule('q', 'b', clock.now());
    await store.schedule('q', 'a', clock.now() - 1);
    await store.schedule('q', 'c', clock.now());
    await expect(store.queueSize('q')).resolves.toBe(2);
    await expect(store.claimDue('q', 10, 1000)).resolves.toEqual(['a', 'c']);
    await store.close();
  });

  it('sweeps expired entries with one interval, without anyone reading them', async () => {
    jest.useFakeTimers();
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now, sweepIntervalMs: 1000 });
    expect(jest.getTimerCount()).toBe(1);
    for (let i = 0; i < 1000; i++) await store.set(`short${i}`, 'v', 1000);
    await store.set('long', 'v', 60_000);
    expect(jest.getTimerCount()).toBe(1);
    clock.advance(1000);
    jest.advanceTimersByTime(1000);
    expect(store.entryCount).toBe(1);
    await expect(store.get('long')).resolves.toBe('v');
    await store.close();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('sweeps a large map in slices, resuming where the last tick stopped', async () => {
    jest.useFakeTimers();
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now, sweepIntervalMs: 1000 });
    for (let i = 0; i < 25_000; i++) await store.set(`k${i}`, 'v', 1000);
    clock.advance(1000);
    jest.advanceTimersByTime(1000);
    expect(store.entryCount).toBe(15_000);
    jest.advanceTimersByTime(2000);
    expect(store.entryCount).toBe(0);
    await store.close();
  });

  it('drops an expired entry when it is read', async () => {
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now });
    await store.set('k', 'v', 1000);
    clock.advance(1000);
    await expect(store.get('k')).resolves.toBeNull();
    expect(store.entryCount).toBe(0);
    await store.close();
  });

  it('keeps each key its own value and expiry through evictions, class changes and the compaction after a peak', async () => {
    jest.useFakeTimers();
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now, maxEntries: 3000, maxEvictableEntries: 3000 });
    // A peak of short-lived entries, half of them evicted by later ones (their room reused).
    for (let i = 0; i < 6000; i++) {
      await store.set(`old${i}`, `o${i}`, 1000);
      await store.increment(`client${i}`, 1, 1000, { evictable: true });
    }
    // Long-lived ones, each with its own expiry; some move class, some are counters.
    const start = clock.now();
    for (let i = 0; i < 500; i++) {
      await store.set(`live${i}`, `first${i}`, 5000, { evictable: i % 2 === 0 });
      await store.set(`live${i}`, i % 3 === 0 ? String(i) : `v${i}`, 60_000 + i, { evictable: i % 4 === 0 });
      if (i % 3 === 0)
        await expect(store.increment(`live${i}`, 1, 1)).resolves.toEqual({
          value: i + 1,
          expiresAt: start + 60_000 + i,
        });
    }
    const value = (i: number) => (i % 3 === 0 ? String(i + 1) : `v${i}`);
    // The peak expires; a whole sweep finds the slab mostly free and compacts it.
    clock.advance(1000);
    jest.advanceTimersByTime(5000);
    expect(store.entryCount).toBe(500);
    for (let i = 0; i < 500; i++) await expect(store.get(`live${i}`)).resolves.toBe(value(i));
    clock.advance(59_000 - 1);
    for (let i = 0; i < 500; i++) {
      await expect(store.get(`live${i}`)).resolves.toBe(value(i));
      clock.advance(1);
      await expect(store.get(`live${i}`)).resolves.toBeNull();
    }
    expect(store.entryCount).toBe(0);
    await store.close();
  });

  it('rescheduling a member of a full queue evicts no other member', async () => {
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now, maxEntries: 2 });
    await store.schedule('q', 'a', clock.now());
    await store.schedule('q', 'b', clock.now() + 1);
    await store.schedule('q', 'b', clock.now());
    await expect(store.queueSize('q')).resolves.toBe(2);
    await expect(store.claimDue('q', 10, 1000)).resolves.toEqual(['a', 'b']);
    await store.close();
  });

  it('claims the earliest due members first, at most the limit, after any schedules, reschedules and removals', async () => {
    // Few members, many steps: each is rescheduled often, so the heap is compacted along the way.
    const step = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          op: fc.constant('schedule' as const),
          member: fc.integer({ min: 0, max: 7 }),
          at: fc.integer({ min: -50, max: 200 }),
        }),
      },
      fc.record({ op: fc.constant('unschedule' as const), member: fc.integer({ min: 0, max: 7 }) }),
      fc.record({
        op: fc.constant('claim' as const),
        limit: fc.integer({ min: 1, max: 4 }),
        lease: fc.integer({ min: 0, max: 100 }),
        pass: fc.integer({ min: 0, max: 30 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 300 }), async (steps) => {
        const clock = new TestClock();
        const store = new MemoryStore({ clock: clock.now });
        const due = new Map<string, number>();
        for (const s of steps) {
          if (s.op === 'schedule') {
            await store.schedule('q', `m${s.member}`, clock.now() + s.at);
            due.set(`m${s.member}`, clock.now() + s.at);
          } else if (s.op === 'unschedule') {
            await store.unschedule('q', `m${s.member}`);
            due.delete(`m${s.member}`);
          } else {
            clock.advance(s.pass);
            const now = clock.now();
            const claimed = await store.claimDue('q', s.limit, s.lease);
            const expected = [...due.values()].filter((at) => at <= now).sort((a, b) => a - b);
            // Members due at one time may come in either order: their due times are what must match.
            expect(claimed.map((member) => due.get(member))).toEqual(expected.slice(0, s.limit));
            for (const member of claimed) due.set(member, now + s.lease);
          }
        }
        await expect(store.queueSize('q')).resolves.toBe(due.size);
        await store.close();
      }),
      { numRuns: 200 },
    );
  });

  it('claims in due order after most of a queue was unscheduled', async () => {
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now });
    // Due times in no order of scheduling; 83 of 100 removed, which compacts the queue.
    const dueIn = (i: number) => (i * 37) % 100;
    for (let i = 0; i < 100; i++) await store.schedule('q', `m${i}`, clock.now() + dueIn(i));
    for (let i = 0; i < 83; i++) await store.unschedule('q', `m${i}`);
    clock.advance(100);
    const left = Array.from({ length: 17 }, (_, i) => 83 + i).sort((a, b) => dueIn(a) - dueIn(b));
    await expect(store.claimDue('q', 100, 1000)).resolves.toEqual(left.map((i) => `m${i}`));
    await store.close();
  });

  it('gives back every entry when closed, kept and evictable, recent and older (entryCount 0)', async () => {
    const store = new MemoryStore();
    // More keys than WriteOrder keeps as recent (1,024), so some have aged into its older map.
    for (let i = 0; i < 1_100; i++) await store.set(`k${i}`, 'v', 60_000);
    for (let i = 0; i < 1_100; i++) await store.increment(`c${i}`, 1, 60_000, { evictable: true });
    expect(store.entryCount).toBe(2_200);
    await store.close();
    expect(store.entryCount).toBe(0);
  });

  it('claims a member scheduled twice at one due time once, and loses none to a lease of 0', async () => {
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now });
    const now = clock.now();
    await store.schedule('q', 'a', now);
    await store.schedule('q', 'a', now + 5);
    await store.schedule('q', 'a', now);
    await store.schedule('q', 'b', now);
    await expect(store.claimDue('q', 10, 0)).resolves.toEqual(['a', 'b']);
    await expect(store.claimDue('q', 10, 1000)).resolves.toEqual(['a', 'b']);
    await expect(store.claimDue('q', 10, 1000)).resolves.toEqual([]);
    clock.advance(1000);
    await expect(store.claimDue('q', 10, 1000)).resolves.toEqual(['a', 'b']);
    await expect(store.queueSize('q')).resolves.toBe(2);
    await store.close();
  });

  it('claims by due time whatever the distance from the first one scheduled: before it, weeks after it', async () => {
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now });
    const now = clock.now();
    const day = 86_400_000;
    // Kept as offsets from the first (small integers within 24 days of it): these cross that bound.
    await store.schedule('q', 'month', now + 30 * day);
    await store.schedule('q', 'past', now - 40 * day);
    await store.schedule('q', 'weeks', now + 25 * day);
    await store.schedule('q', 'now', now);
    await store.schedule('q', 'late', now + 30 * day + 1);
    await expect(store.claimDue('q', 10, 60 * day)).resolves.toEqual(['past', 'now']);
    clock.advance(30 * day);
    await expect(store.claimDue('q', 10, 60 * day)).resolves.toEqual(['weeks', 'month']);
    clock.advance(1);
    await expect(store.claimDue('q', 10, 60 * day)).resolves.toEqual(['late']);
    // Each re-leased 60 days from its claim: the first two are due again 60 days after the start.
    clock.advance(30 * day - 2);
    await expect(store.claimDue('q', 10, 1000)).resolves.toEqual([]);
    clock.advance(1);
    expect((await store.claimDue('q', 10, 1000)).sort()).toEqual(['now', 'past']);
    await store.close();
  });

  it('rejects bounds that are not positive', () => {
    expect(() => new MemoryStore({ maxEntries: 0 })).toThrow(RangeError);
    expect(() => new MemoryStore({ maxEvictableEntries: 0 })).toThrow(RangeError);
    expect(() => new MemoryStore({ sweepIntervalMs: 0 })).toThrow(RangeError);
  });

  it('names the bound it refuses and the value given: fractions, NaN and infinities too', () => {
    for (const maxEntries of [1.5, -1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => new MemoryStore({ maxEntries })).toThrow(
        `MemoryStore: maxEntries must be a positive integer, got ${maxEntries}`,
      );
    for (const maxEvictableEntries of [2.5, -1, Number.NaN])
      expect(() => new MemoryStore({ maxEvictableEntries })).toThrow(
        `MemoryStore: maxEvictableEntries must be a positive integer, got ${maxEvictableEntries}`,
      );
    for (const sweepIntervalMs of [-1, Number.NaN, Number.POSITIVE_INFINITY])
      expect(() => new MemoryStore({ sweepIntervalMs })).toThrow(
        `MemoryStore: sweepIntervalMs must be a positive number, got ${sweepIntervalMs}`,
      );
    // The smallest bounds are accepted.
    return Promise.all([
      new MemoryStore({ maxEntries: 1, maxEvictableEntries: 1, sweepIntervalMs: 0.5 }).close(),
    ]);
  });

  it('bounds the evictable entries by maxEntries when no bound of their own is given', async () => {
    const store = new MemoryStore({ maxEntries: 2 });
    for (let i = 0; i < 3; i++) await store.increment(`client:${i}`, 1, 60_000, { evictable: true });
    await expect(store.get('client:0')).resolves.toBeNull();
    await expect(store.get('client:1')).resolves.toBe('1');
    expect(store.entryCount).toBe(2);
    await store.close();
  });

  it('claims from a queue of 100,000 members by due order, without scanning it', async () => {
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now });
    const start = clock.now();
    for (let i = 0; i < 100_000; i++) await store.schedule('q', `m${i}`, start + ((i * 7919) % 100_000));
    await expect(store.claimDue('q', 3, 60_000)).resolves.toEqual(['m0']);
    clock.advance(2);
    const claimed = await store.claimDue('q', 10, 60_000);
    // Due at start+1 and start+2: i * 7919 % 100000 in {1, 2}.
    expect(claimed).toHaveLength(2);
    await expect(store.queueSize('q')).resolves.toBe(100_000);
    await store.close();
  });
});

describe('MemoryStore heap', () => {
  // A key built by a template is a rope of its parts (32 B a part beside the characters) and a slice
  // keeps its whole parent: entries kept for hours are what a host's heap per session is made of.
  it('keeps keys, values and queue members built from parts at the size of their characters', async () => {
    const store = new MemoryStore();
    const n = 20_000;
    const digest = (i: number) => `${i}`.padStart(22, 'x');
    const parent = 'r'.repeat(4096);
    const before = settledHeapUsed();
    for (let i = 0; i < n; i++) {
      const key = `protect:pump:cm:${digest(i)}:${498881}`;
      await store.set(key, `${digest(i)}:${'v'.repeat(10)}:${i}`, 3_600_000);
      await store.increment(`subject:{n:${digest(i)}}:${20786}:n`, 1, 3_600_000);
      await store.schedule('reconcile', `${parent}${i}`.slice(4000), i);
    }
    const perEntry = (settledHeapUsed() - before) / (3 * n);
    // Flat: about 150 B an entry here; as ropes and slices of their parents, over 300.
    expect(perEntry).toBeLessThan(220);
    await expect(store.get(`protect:pump:cm:${digest(7)}:498881`)).resolves.toBe(`${digest(7)}:vvvvvvvvvv:7`);
    await store.close();
  });

  it("keeps a text written twice in a row once (a session id: an erasure slot's value, a queue member)", async () => {
    const n = 20_000;
    const id = (i: number, of: string) => `${of}${i}`.padStart(36, '0').split('').join('');
    const grown = async (member: (i: number) => string): Promise<number> => {
      const store = new MemoryStore();
      const before = settledHeapUsed();
      for (let i = 0; i < n; i++) {
        await store.set(`subject:{n:${i}}:20787:0`, id(i, 's'), 3_600_000);
        await store.schedule('reconcile', member(i), i);
      }
      const grew = settledHeapUsed() - before;
      await expect(store.get('subject:{n:7}:20787:0')).resolves.toBe(id(7, 's'));
      await store.close();
      return grew / n;
    };
    const apart = await grown((i) => id(i, 'q'));
    const same = await grown((i) => id(i, 's'));
    // A 36-character string is 56 B: kept once, the store holds about that much less a session.
    expect(apart - same).toBeGreaterThan(40);
  });

  it("keeps a key that begins with one of the module's prefixes in fewer bytes than the key itself", async () => {
    const n = 20_000;
    const digest = (i: number) => `${i}`.padStart(22, 'x');
    const grown = async (prefix: string): Promise<number> => {
      const store = new MemoryStore();
      const before = settledHeapUsed();
      for (let i = 0; i < n; i++) await store.increment(`${prefix}${digest(i)}:498906`, 1, 3_600_000);
      const grew = settledHeapUsed() - before;
      await expect(store.get(`${prefix}${digest(7)}:498906`)).resolves.toBe('1');
      await store.close();
      return grew / n;
    };
    // The same length: 44 characters are 64 B a key; held as one code and 31 characters, 48 B.
    const other = await grown('protect-pump-s:');
    const module = await grown('protect:pump:s:');
    expect(other - module).toBeGreaterThanOrEqual(12);
  });

  it('keeps keys apart whatever they begin with: a prefix, its code, the escape, a prefix of a prefix', async () => {
    const store = new MemoryStore();
    const keys = [
      'protect:pump:s:a',
      'protect:pump:session:a',
      'protect:pump:sx',
      'protect:pump:',
      'protect:s:a',
      'protect:',
      'protect',
      'session:{a}',
      'erased:{a}',
      '\u0001s:a',
      '\u0002pump:s:a',
      '\u0000\u0001s:a',
      '\u0000',
      '\u0016s',
      '\u0017s',
      '',
      'pump:s:a',
    ];
    for (const [i, key] of keys.entries()) await store.set(key, String(i), 60_000);
    for (const [i, key] of keys.entries()) await expect(store.get(key)).resolves.toBe(String(i));
    for (const key of keys) await expect(store.setIfAbsent(key, 'again', 60_000)).resolves.toBe(false);
    await store.increment('protect:pump:n:a', 1, 60_000);
    await expect(store.increment('protect:pump:n:a', 1, 60_000)).resolves.toMatchObject({ value: 2 });
    await expect(store.get('protect:pump:n:a')).resolves.toBe('2');
    await store.delete('protect:pump:n:a');
    expect(store.entryCount).toBe(keys.length);
    expect(dumpMemoryStore(store).sort()).toEqual(keys.map((key, i) => `${key} ${i}`).sort());
    for (const key of keys) await store.delete(key);
    expect(store.entryCount).toBe(0);
    await store.close();
  });

  it('holds no more room after rewrites, class changes and evictions than its entries take', async () => {
    const store = new MemoryStore({ maxEntries: 1000, maxEvictableEntries: 1000 });
    const value = (i: number) => `${i}:`.padEnd(1000, 'v');
    for (let i = 0; i < 1000; i++) {
      await store.set(`kept${i}`, value(i), 3_600_000);
      await store.set(`client${i}`, value(i), 3_600_000, { evictable: true });
    }
    const full = settledHeapUsed();
    for (let i = 0; i < 6000; i++) {
      await store.set(`kept${i % 1000}`, value(i), 3_600_000);
      await store.set(`client${i % 1000}`, value(i), 3_600_000, { evictable: i % 2 === 0 });
      await store.set(`new${i}`, value(i), 3_600_000, { evictable: i % 3 === 0 });
    }
    // 18,000 values of 1 KB were written: a slot kept for each would hold 18 MB more.
    expect(settledHeapUsed() - full).toBeLessThan(3_000_000);
    expect(store.entryCount).toBe(2000);
    await store.close();
  });

  it('holds a queue rescheduled 200,000 times at the room of its members', async () => {
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now });
    const members = Array.from({ length: 10 }, (_, i) => `member${i}`);
    for (const member of members) await store.schedule('q', member, clock.now());
    const before = settledHeapUsed();
    // Each time earlier than the last: the heap's items are in the reverse of their due order.
    for (let i = 0; i < 200_000; i++) await store.schedule('q', members[i % 10]!, clock.now() + 200_000 - i);
    // Each reschedule leaves a stale item in the heap (16 B): uncompacted, 3.2 MB.
    expect(settledHeapUsed() - before).toBeLessThan(1_000_000);
    await expect(store.queueSize('q')).resolves.toBe(10);
    // The last scheduled is due first: member9 at +1, member0 at +10.
    clock.advance(10);
    await expect(store.claimDue('q', 20, 1000)).resolves.toEqual([...members].reverse());
    await store.close();
  });

  it('gives the room of a peak back once it expired and was swept', async () => {
    jest.useFakeTimers();
    const clock = new TestClock();
    const store = new MemoryStore({ clock: clock.now, sweepIntervalMs: 1000 });
    await store.set('long', 'v', 3_600_000);
    const before = settledHeapUsed();
    for (let i = 0; i < 200_000; i++) await store.set(`peak${i}`, 'v', 1000);
    clock.advance(1000);
    jest.advanceTimersByTime(25_000);
    expect(store.entryCount).toBe(1);
    // Uncompacted, the peak's 200,000 free slots keep three arrays of 1.6 MB each.
    expect(settledHeapUsed() - before).toBeLessThan(2_000_000);
    await expect(store.get('long')).resolves.toBe('v');
    await store.close();
    jest.useRealTimers();
  });
});

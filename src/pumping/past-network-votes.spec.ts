/**
 * Past-network votes (RangeHolds.votePastNetwork): what a country's `networksPast` reads in the store when
 * the day turns, when the memo (0bc371a) is cleared at its bound, when a vote's write fails or its answer
 * is lost, when another vote takes its slot between its read and its write, and when a bounded store is
 * full (the vote evicted).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { MemoryStore } from '../store/memory.store.js';
import { RedisStore } from '../store/redis.store.js';
import { sharedRedisUrl } from '../../test/support/redis-server.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { RangeStats } from './range-stats.js';
import { PAST_NETWORKS_FLAG } from './giver-shares.js';

const MIDNIGHT = Date.UTC(2026, 0, 7);
const COUNTRY = [{ id: 'country:RU' }];

type Failure = 'down' | 'answer lost' | (() => Promise<unknown>);

/**
 * A store on a settable clock (MemoryStore unless given) whose next `times` calls carrying the named
 * operation (alone or in a batch) fail: 'down' before running anything, 'answer lost' once run (a
 * deadline passed while Redis ran it); or, given a function, run after it (something lands first).
 */
function setup(start = MIDNIGHT - 1, open?: (clock: () => number) => VerificationStore) {
  let now = start;
  const inner = open ? open(() => now) : new MemoryStore({ clock: () => now });
  const failing = new Map<string, { times: number; how: Failure }>();
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const ops =
          property === 'batch' ? (args[0] as { op: string }[]).map(({ op }) => op) : [String(property)];
        const failure = ops.map((op) => [op, failing.get(op)] as const).find(([, f]) => f && f.times > 0);
        const run = () => (value as (...a: unknown[]) => unknown).apply(target, args);
        if (failure === undefined) return run();
        const [op, f] = failure;
        failing.set(op, { ...f!, times: f!.times - 1 });
        return (async () => {
          if (typeof f!.how === 'function') return f!.how().then(run);
          if (f!.how === 'answer lost') await run();
          throw new Error('store down');
        })();
      };
    },
  }) as VerificationStore;
  const stats = () => new RangeStats(store, { windowMs: 3_600_000, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
  const rs = stats();
  const networksPast = async (on = rs) => (await on.read(COUNTRY)).get('country:RU')!.networksPast ?? 0;
  return {
    rs,
    stats,
    inner,
    networksPast,
    fail: (op: string, times = 1, how: Failure = 'down') => failing.set(op, { times, how }),
    /** The next call carrying `op` runs once `first` has run. */
    before: (op: string, first: () => Promise<unknown>) => failing.set(op, { times: 1, how: first }),
    at: (t: number) => {
      now = t;
    },
  };
}

describe('past-network votes: the memo (0bc371a)', () => {
  it('a network past its share at 23:59:59.999 and again at 00:00:00.000 votes on both UTC days', async () => {
    const s = setup(MIDNIGHT - 1);
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    await s.rs.votePastNetwork('country:RU', 'net:198.51.100.0/24');
    expect(await s.networksPast()).toBe(2);
    s.at(MIDNIGHT);
    // The memo names yesterday's votes: today's are cast anew (yesterday's still read, the max of both).
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    await s.rs.votePastNetwork('country:RU', 'net:198.51.100.0/24');
    await s.rs.votePastNetwork('country:RU', 'net:100.64.0.0/24');
    s.at(MIDNIGHT + 86_400_000);
    // Only yesterday (the day of MIDNIGHT) is read now: all three were counted on it.
    expect(await s.networksPast()).toBe(3);
  });

  it('a network voting again on one instance, another, or after the memo is cleared at its bound counts once', async () => {
    const s = setup(MIDNIGHT + 3_600_000);
    const other = s.stats();
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    await other.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    expect(await s.networksPast()).toBe(1);
    // 10,000 votes in another country fill the memo; the next one clears it.
    for (let n = 0; n < 10_000; n++)
      await s.rs.votePastNetwork('country:DE', `net:10.${n >> 8}.${n & 255}.0/24`);
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    expect(await s.networksPast()).toBe(1);
    await s.rs.votePastNetwork('country:RU', 'net:198.51.100.0/24');
    await s.rs.votePastNetwork('country:RU', 'net:100.64.0.0/24');
    expect(await s.networksPast()).toBe(3);
  });

  it('a vote whose set-if-absent fails (store down) is not remembered: the next start past that share casts it', async () => {
    const s = setup(MIDNIGHT + 3_600_000);
    s.fail('setIfAbsent');
    await expect(s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24')).rejects.toThrow('store down');
    expect(await s.networksPast()).toBe(0);
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    expect(await s.networksPast()).toBe(1);
  });
});

const opened: VerificationStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

const STORES: [string, (clock: () => number) => VerificationStore][] = [
  ['MemoryStore', (clock) => new MemoryStore({ clock })],
  [
    'RedisStore',
    (clock) => new RedisStore({ url: sharedRedisUrl(), keyPrefix: `pv-votes:${randomUUID()}:`, clock }),
  ],
];

describe.each(STORES)('past-network votes on %s: a vote and its count', (_, open) => {
  const on = () =>
    setup(MIDNIGHT + 3_600_000, (clock) => {
      const store = open(clock);
      opened.push(store);
      return store;
    });

  it('a vote whose write fails (store down) is not counted: the next start past that share, here or on another instance, casts it once', async () => {
    const s = on();
    const other = s.stats();
    s.fail('setIfAbsent');
    await expect(s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24')).rejects.toThrow('store down');
    expect(await s.networksPast()).toBe(0);
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    expect(await s.networksPast()).toBe(1);
    await other.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    expect(await s.networksPast()).toBe(1);
  });

  it('a vote whose answer is lost once written (a deadline) counts once: here and on another instance it reads counted', async () => {
    const s = on();
    s.fail('setIfAbsent', 1, 'answer lost');
    await expect(s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24')).rejects.toThrow('store down');
    expect(await s.networksPast()).toBe(1);
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    await s.stats().votePastNetwork('country:RU', 'net:203.0.113.0/24');
    expect(await s.networksPast()).toBe(1);
  });

  it('another network takes the slot a vote read free, before its write: the vote takes the next slot, both counted', async () => {
    const s = on();
    const other = s.stats();
    s.before('setIfAbsent', () => other.votePastNetwork('country:RU', 'net:198.51.100.0/24'));
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    expect(await s.networksPast()).toBe(2);
  });

  it('the same network on another instance takes the slot a vote read free, before its write: counted once', async () => {
    const s = on();
    const other = s.stats();
    s.before('setIfAbsent', () => other.votePastNetwork('country:RU', 'net:203.0.113.0/24'));
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    await s.rs.votePastNetwork('country:RU', 'net:198.51.100.0/24');
    expect(await s.networksPast()).toBe(2);
  });

  it(`counts up to ${PAST_NETWORKS_FLAG} networks a day: the country is flagged, more networks add nothing, a counted one is not counted again`, async () => {
    const s = on();
    for (let n = 0; n < PAST_NETWORKS_FLAG + 2; n++)
      await s.rs.votePastNetwork('country:RU', `net:10.0.${n}.0/24`);
    expect(await s.networksPast()).toBe(PAST_NETWORKS_FLAG);
    await s.stats().votePastNetwork('country:RU', 'net:10.0.0.0/24');
    expect(await s.networksPast()).toBe(PAST_NETWORKS_FLAG);
    // Another country's votes are its own.
    await s.rs.votePastNetwork('country:DE', 'net:10.0.0.0/24');
    expect((await s.rs.read([{ id: 'country:DE' }])).get('country:DE')!.networksPast).toBe(1);
  });
});

describe('past-network votes on a bounded MemoryStore', () => {
  it('a flood of evictable entries (one per caller) leaves the vote: another instance does not count the network again', async () => {
    const s = setup(MIDNIGHT + 3_600_000, (clock) => new MemoryStore({ clock, maxEvictableEntries: 10 }));
    await s.rs.votePastNetwork('country:RU', 'net:203.0.113.0/24');
    for (let i = 0; i < 20; i++) await s.inner.set(`caller:${i}`, '1', 86_400_000, { evictable: true });
    await s.stats().votePastNetwork('country:RU', 'net:203.0.113.0/24');
    expect(await s.networksPast()).toBe(1);
    await s.inner.close();
  });
});

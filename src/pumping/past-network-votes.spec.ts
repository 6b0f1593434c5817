/**
 * Attack on the past-network vote memo (0bc371a): what a country's `networksPast` reads in the store when
 * the day turns, when the memo is cleared at its bound, and when a vote's store call fails part way.
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { RangeStats } from './range-stats.js';

const MIDNIGHT = Date.UTC(2026, 0, 7);
const COUNTRY = [{ id: 'country:RU', withBaseline: true }];

/** A MemoryStore on a settable clock whose next `failing` call of the named operation throws (store down). */
function setup(start = MIDNIGHT - 1) {
  let now = start;
  const inner = new MemoryStore({ clock: () => now });
  const failing = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const left = failing.get(String(property)) ?? 0;
        if (left > 0) {
          failing.set(String(property), left - 1);
          return Promise.reject(new Error('store down'));
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  }) as VerificationStore;
  const stats = () => new RangeStats(store, { windowMs: 3_600_000, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
  const rs = stats();
  const networksPast = async (on = rs) => (await on.read(COUNTRY)).get('country:RU')!.networksPast ?? 0;
  return {
    rs,
    stats,
    networksPast,
    fail: (op: string, times = 1) => failing.set(op, times),
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

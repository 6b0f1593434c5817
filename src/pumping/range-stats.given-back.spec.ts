/**
 * A start taken back (release, or a steered attempt's proof) writes each counter back as it was counted:
 * a country's stays out of reach of eviction, a range's stays evictable (a flood of ranges must not evict a
 * country's counts, nor fill a bounded store with ranges).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { RangeStats } from './range-stats.js';

const now = Date.UTC(2026, 0, 6, 12);
const stores: MemoryStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

function stats(): RangeStats {
  const store = new MemoryStore({ clock: () => now, maxEvictableEntries: 10 });
  stores.push(store);
  return new RangeStats(store, { windowMs: 3_600_000, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
}

const country = { id: 'country:RU' };
const flood = async (rs: RangeStats) => {
  for (let i = 0; i < 50; i++) await rs.countStart([{ id: `range:+79${i}` }]);
};

describe('RangeStats: a start taken back keeps its counters as they were written', () => {
  it("a country's start released, then a flood of ranges: the country keeps its other start", async () => {
    const rs = stats();
    await rs.countStart([country]);
    await (await rs.countStart([country])).release();
    await flood(rs);
    expect((await rs.read([country])).get(country.id)).toMatchObject({ starts: 1, current: 1 });
  });

  it("a range's start released, then a flood of ranges: the range's counter is evicted like the others", async () => {
    const rs = stats();
    const range = { id: 'range:+7916123' };
    await rs.countStart([range]);
    await (await rs.countStart([range])).release();
    await flood(rs);
    expect((await rs.read([range])).get(range.id)).toMatchObject({ starts: 0, current: 0 });
  });

  it('an attempt a hold refused is taken back from its country alone: its range counts it, its giver stays charged', async () => {
    const rs = stats();
    const range = { id: 'range:+7916123' };
    const giver = { id: 'address:203.0.113.7', share: 5, network: false };
    const counted = await rs.countStart([range, country], '+79161234567', undefined, [giver]);
    expect(await rs.readShares([giver])).toStrictEqual([100]);
    await counted.refused();
    const counts = await rs.read([range, country]);
    expect([counts.get(range.id)?.current, counts.get(country.id)?.current]).toStrictEqual([1, 0]);
    // Refused attempts use up the caller's share as starts do.
    expect(await rs.readShares([giver])).toStrictEqual([100]);
  });
});

/**
 * What the burst specs share (range-bursts.spec, the burst attack parts): a range and its prefix, both
 * with baselines, and RangeStats as the defence makes it (an hour's window) over a MemoryStore of its own
 * a minute past midnight, closed after the test.
 */
import { afterEach } from '@jest/globals';
import { RangeStats, type StatsSubject } from '../../src/pumping/range-stats.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { SPEC_DATA_KEYS } from './data-keys.js';

export const range: StatsSubject = { id: 'range:+7916123' };
export const prefix: StatsSubject = { id: 'prefix:+7916' };

/** Call in a `describe`: a maker of RangeStats, each over a store of its own closed after the test. */
export function burstStats(): () => RangeStats {
  const stores: MemoryStore[] = [];
  afterEach(async () => Promise.all(stores.splice(0).map((s) => s.close())));
  return () => {
    const store = new MemoryStore({ clock: () => Date.UTC(2026, 0, 2) + 60_000 });
    stores.push(store);
    return new RangeStats(store, { windowMs: 3_600_000, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
  };
}

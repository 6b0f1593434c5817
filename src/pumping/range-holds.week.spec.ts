/**
 * A giver's balance is the fixed week's (giver-shares.ts): kept to the week's last millisecond, a new one
 * from its first. On the store's clock, one tick before the bound and at it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { GIVER_SHARES, giversOf } from './giver-shares.js';
import { RangeStats } from './range-stats.js';
import { WEEK_MS } from './range-stats-keys.js';

/** The first millisecond of a fixed week (weeks count from the epoch). */
const WEEK_START = Math.floor(Date.UTC(2026, 0, 6, 12) / WEEK_MS) * WEEK_MS;
const stores: MemoryStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

describe("RangeHolds: a giver's balance over its week", () => {
  it('an address past its share at the week’s first millisecond is still past at its last; within from the next week’s first', async () => {
    const clock = { now: WEEK_START };
    const store = new MemoryStore({ clock: () => clock.now });
    stores.push(store);
    const stats = new RangeStats(store, { windowMs: 3_600_000, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
    const ip = '203.0.113.7';
    const givers = giversOf(
      { phoneNumber: '+79161234567', owner: undefined, clientKey: ip, ip, method: 'sms' },
      64,
    );
    const country = [{ id: 'country:RU' }];
    const standing = async () => {
      const counted = await stats.countStart(country, undefined, undefined, givers);
      await counted.release();
      return counted.standing;
    };
    for (let i = 0; i < GIVER_SHARES.address; i++)
      await stats.countStart(country, undefined, undefined, givers);
    expect(await standing()).toBe('past');
    clock.now = WEEK_START + WEEK_MS - 1;
    expect(await standing()).toBe('past');
    clock.now = WEEK_START + WEEK_MS;
    expect(await standing()).toBe('within');
  });
});

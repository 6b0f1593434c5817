import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { RangeStats, type StatsSubject } from './range-stats.js';
import { RECENT_MS, WEEK_MS } from './range-stats-keys.js';
import { GIVER_SHARES, type Giver } from './giver-shares.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';

/* Issue 43: a country's week and last minutes, and one caller's bounded share of the places. */

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The start of a fixed week (weeks are counted from the epoch). */
const WEEK_START = Math.ceil(Date.UTC(2026, 0, 1) / WEEK_MS) * WEEK_MS;

const range: StatsSubject = { id: 'range:+7916123' };
const country: StatsSubject = { id: 'country:RU' };
const client: StatsSubject = { id: 'client:c1' };
const CALLER_SHARE_PER_WEEK = GIVER_SHARES.client;
const c1: Giver[] = [{ id: 'client:c1', share: CALLER_SHARE_PER_WEEK, network: false }];
const c2: Giver[] = [{ id: 'client:c2', share: CALLER_SHARE_PER_WEEK, network: false }];

describe('RangeStats: the week and the caller’s share', () => {
  const clock = { now: WEEK_START };
  const stores: MemoryStore[] = [];
  const stats = (): RangeStats => {
    const store = new MemoryStore({ clock: () => clock.now });
    stores.push(store);
    return new RangeStats(store, { windowMs: HOUR, recordTtlMs: DAY }, SPEC_DATA_KEYS);
  };
  afterEach(async () => {
    clock.now = WEEK_START;
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('a caller adds its share to prefixes and countries, not one start more; its range and itself count every start', async () => {
    const rs = stats();
    for (let i = 0; i < CALLER_SHARE_PER_WEEK - 1; i++)
      await rs.countStart([range, country, client], undefined, 'client:c1', c1);
    const below = await rs.read([range, country, client]);
    expect(below.get(country.id)).toMatchObject({ starts: CALLER_SHARE_PER_WEEK - 1 });
    await rs.countStart([range, country, client], undefined, 'client:c1', c1);
    await rs.countStart([range, country, client], undefined, 'client:c1', c1);
    const past = await rs.read([range, country, client]);
    // A range is narrow: many addresses concentrated on one block are held there, past any share.
    expect(past.get(range.id)).toMatchObject({ starts: CALLER_SHARE_PER_WEEK + 1 });
    expect(past.get(country.id)).toMatchObject({ starts: CALLER_SHARE_PER_WEEK });
    expect(past.get(country.id)!.week).toStrictEqual({ starts: CALLER_SHARE_PER_WEEK, verified: 0 });
    expect(past.get(client.id)).toMatchObject({ starts: CALLER_SHARE_PER_WEEK + 1 });
    // Another caller is counted; a release of a start past the share takes back only what it added.
    const other = await rs.countStart([range, country], undefined, 'client:c2', c2);
    const extra = await rs.countStart([range, country, client], undefined, 'client:c1', c1);
    await extra.release();
    await other.release();
    expect((await rs.read([country, client])).get(country.id)).toMatchObject({
      starts: CALLER_SHARE_PER_WEEK,
    });
    // The next fixed week, a new share.
    clock.now = WEEK_START + WEEK_MS;
    await rs.countStart([country], undefined, 'client:c1', c1);
    expect((await rs.read([country])).get(country.id)!.week!.starts).toBeCloseTo(
      CALLER_SHARE_PER_WEEK + 1,
      5,
    );
  });

  it('a country keeps a week of starts and verified numbers, and counts its starts of the last minutes', async () => {
    const rs = stats();
    await rs.countStart([range, country], '+79161230001');
    await rs.countVerified([range.id, country.id], '+79161230001');
    expect((await rs.read([country])).get(country.id)).toMatchObject({
      week: { starts: 1, verified: 1 },
      recent: 1,
    });
    // Out of the last minutes after two of their buckets; still in the week six days on.
    clock.now += 2 * RECENT_MS;
    expect((await rs.read([country])).get(country.id)!.recent).toBe(0);
    clock.now = WEEK_START + 6 * DAY;
    expect((await rs.read([country])).get(country.id)!.week).toStrictEqual({ starts: 1, verified: 1 });
    // Half a week into the next, half of it is left (a sliding week from two fixed ones).
    clock.now = WEEK_START + WEEK_MS + WEEK_MS / 2;
    expect((await rs.read([country])).get(country.id)!.week).toStrictEqual({ starts: 0.5, verified: 0.5 });
    // Ranges keep no week.
    expect((await rs.read([range])).get(range.id)!.week).toBeUndefined();
  });
});

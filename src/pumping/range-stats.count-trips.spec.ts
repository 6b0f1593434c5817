/**
 * What counting a start costs in store round trips and writes (issue 45), on RoundTripStore (trips and the
 * operations each carried, no clock, no sleep): a start counts what its standing keeps and reads the rest
 * in one trip; the counters it writes are its subjects'; an instance remembers up to 10,000 full balances.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { PumpingDefence, type PumpingAttempt } from './pumping-defence.js';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { roundTripStore, type RoundTripStore } from '../../test/support/round-trip-store.js';
import { GIVER_SHARES, type Giver } from './giver-shares.js';
import { RangeStats } from './range-stats.js';
import { pumpKey, PUMP, RECENT_MS, WEEK_MS } from './range-stats-keys.js';

const quiet = { warn: () => undefined, error: () => undefined };
const now = Date.UTC(2026, 0, 6, 12);
const settings = { ...VERIFICATION_DEFAULTS.limits.pumping };
const opened: RoundTripStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((rt) => rt.inner.close()));
});

function store(): RoundTripStore {
  const rt = roundTripStore({ clock: () => now });
  opened.push(rt);
  return rt;
}

/** An instance of the defence on `rt`'s store, over `stats` (its memory of full balances). */
function instance(
  rt: RoundTripStore,
  stats = new RangeStats(rt.store, settings, SPEC_DATA_KEYS),
): PumpingDefence {
  const report = {
    logger: quiet,
    announce: () => undefined,
    metrics: { fraudSuspected: () => undefined, pumpingRefusal: () => undefined },
  };
  return new PumpingDefence(rt.store, settings, 64, report, stats);
}

let serial = 0;
const from = (ip: string): PumpingAttempt => {
  serial += 1;
  const phoneNumber = `+7916${String(serial % 1000).padStart(3, '0')}${String(serial).padStart(4, '0')}`;
  return { phoneNumber, owner: undefined, clientKey: ip, ip, method: 'sms' };
};

/** The operations of each round trip one step waited for. */
async function tripsOf(rt: RoundTripStore, step: () => Promise<unknown>): Promise<number[]> {
  rt.reset();
  await step();
  return rt.trips.map((t) => t.length);
}

describe('RangeStats.countStart: round trips and writes', () => {
  it('a start counted as its balances showed waits for one trip of counts, within its share or past it; past it, fewer counters are written', async () => {
    const rt = store();
    const one = instance(rt);
    const ip = '203.0.113.7';
    const counted: number[][] = [];
    for (let i = 0; i <= GIVER_SHARES.address; i++) {
      const assessment = await one.assess(from(ip));
      counted.push(await tripsOf(rt, () => one.admit(assessment, false)));
    }
    const [within, past] = [counted[GIVER_SHARES.address - 1]!, counted[GIVER_SHARES.address]!];
    // The counts, then the burst marks (new number, new caller): three trips either way, no take-back.
    expect(within.length).toBe(3);
    expect(past.length).toBe(3);
    // Past its share the prefix's and country's day, week and recent counters are neither written nor read.
    expect(past[0]!).toBeLessThan(within[0]!);
  });

  it('a start counted with no standing given counts as within: one trip', async () => {
    const rt = store();
    const stats = new RangeStats(rt.store, settings, SPEC_DATA_KEYS);
    const subjects = [{ id: 'country:RU' }, { id: 'prefix:+7916' }];
    expect(await tripsOf(rt, () => stats.countStart(subjects))).toStrictEqual([6]);
  });

  it("a range's and a caller's start write no day, week or recent counter (only prefixes and countries keep them)", async () => {
    const rt = store();
    const stats = new RangeStats(rt.store, settings, SPEC_DATA_KEYS);
    const subjects = [{ id: 'range:+7916123' }, { id: 'owner:user-1' }];
    await stats.countStart(subjects, '+79161234567');
    const day = Math.floor(now / 86_400_000);
    for (const { id } of subjects) {
      const tag = SPEC_DATA_KEYS.digest(id);
      expect(await rt.inner.get(pumpKey(PUMP.starts, tag, Math.floor(now / settings.windowMs)))).toBe('1');
      expect(await rt.inner.get(pumpKey(PUMP.dayStarts, tag, day))).toBeNull();
      expect(await rt.inner.get(pumpKey(PUMP.weekStarts, tag, Math.floor(now / WEEK_MS)))).toBeNull();
      expect(await rt.inner.get(pumpKey(PUMP.recent, tag, Math.floor(now / RECENT_MS)))).toBeNull();
    }
  });
});

describe('RangeHolds: full balances remembered, up to 10,000', () => {
  /** `n` givers with no room (share 0), the first the client key of `ip`, noted by one counted start. */
  async function fill(stats: RangeStats, ip: string, n: number): Promise<void> {
    const givers: Giver[] = Array.from({ length: n }, (_, i) => ({
      id: i === 0 ? `client:${ip}` : `client:filler-${n}-${i}`,
      share: 0,
      network: false,
    }));
    await stats.countStart([], undefined, undefined, givers, undefined, 'past');
  }

  it('two balances filled on one instance are both remembered: each next start reads its twins in its one trip', async () => {
    const rt = store();
    const one = instance(rt);
    const admitted = async (ip: string) => one.admit(await one.assess(from(ip)), false);
    const [a, b] = ['203.0.113.7', '198.51.100.7'];
    const fresh = await tripsOf(rt, () => one.assess(from('192.0.2.9')));
    for (let i = 0; i < GIVER_SHARES.address; i++) await admitted(a);
    for (let i = 0; i < GIVER_SHARES.address; i++) await admitted(b);
    for (const ip of [a, b]) {
      const past = await tripsOf(rt, () => one.assess(from(ip)));
      expect(past.length).toBe(1);
      expect(past[0]!).toBeGreaterThan(fresh[0]!);
    }
  });

  it('the 10,000th full balance noted keeps the first; the 10,001st forgets it (one trip more for its next start)', async () => {
    for (const [n, remembered] of [
      [10_000, true],
      [10_001, false],
    ] as const) {
      const rt = store();
      const stats = new RangeStats(rt.store, settings, SPEC_DATA_KEYS);
      const one = instance(rt, stats);
      const fresh = await tripsOf(rt, () => one.assess(from('192.0.2.9')));
      const ip = `203.0.113.${n % 200}`;
      await fill(stats, ip, n);
      const next = await tripsOf(rt, () => one.assess(from(ip)));
      expect([n, next[0]! > fresh[0]!]).toStrictEqual([n, remembered]);
    }
  });
});

// At the bound (10,000), a balance noted full again while the memory is full is no new entry and forgets
// nothing: a remembered giver's next start reads its twins in its one trip, with more operations than a
// stranger's.
describe('RangeHolds: full balances remembered at the bound', () => {
  it('with 10,000 remembered, one of them noted full again forgets none of the others', async () => {
    const rt = store();
    const stats = new RangeStats(rt.store, settings, SPEC_DATA_KEYS);
    const one = instance(rt, stats);
    const full = (id: string): Giver => ({ id, share: 0, network: false });
    const operations = async (ip: string) =>
      (await tripsOf(rt, () => one.assess(from(ip)))).reduce((a, b) => a + b, 0);
    const stranger = await operations('192.0.2.9');
    const [a, b] = ['203.0.113.7', '198.51.100.7'];
    const fillers = Array.from({ length: 9_998 }, (_, i) => full(`client:filler-${i}`));
    await stats.countStart(
      [],
      undefined,
      undefined,
      [full(`client:${a}`), full(`client:${b}`), ...fillers],
      undefined,
      'past',
    );
    await stats.countStart([], undefined, undefined, [full(`client:${a}`)], undefined, 'past');
    expect(await operations(b)).toBeGreaterThan(stranger);
  });
});

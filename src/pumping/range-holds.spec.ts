/**
 * What a start past its share costs in store round trips (issue 45), on the instance that saw its giver's
 * balance fill and on another: RangeHolds remembers the balances it saw with no room for another start, and a
 * start whose giver is so remembered reads its country's twins with its other counts. RoundTripStore counts
 * the trips and the operations each carried, with no clock and no sleep.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { PumpingDefence, type PumpingAttempt } from './pumping-defence.js';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { roundTripStore, type RoundTripStore } from '../../test/support/round-trip-store.js';
import { GIVER_SHARES, giversOf, START_WEIGHT } from './giver-shares.js';
import { RangeStats } from './range-stats.js';

const quiet = { warn: () => undefined, error: () => undefined };
const now = Date.UTC(2026, 0, 6, 12);
const opened: RoundTripStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((rt) => rt.inner.close()));
});

/** An instance of the defence on `rt`'s store (its own RangeHolds: its own memory of full balances). */
function instance(rt: RoundTripStore): PumpingDefence {
  const settings = { ...VERIFICATION_DEFAULTS.limits.pumping };
  const report = {
    logger: quiet,
    announce: () => undefined,
    metrics: { fraudSuspected: () => undefined, pumpingRefusal: () => undefined },
  };
  return new PumpingDefence(
    rt.store,
    settings,
    64,
    report,
    new RangeStats(rt.store, settings, SPEC_DATA_KEYS),
  );
}

let serial = 0;
const from = (ip: string): PumpingAttempt => {
  serial += 1;
  const phoneNumber = `+7916${String(serial % 1000).padStart(3, '0')}${String(serial).padStart(4, '0')}`;
  return { phoneNumber, owner: undefined, clientKey: ip, ip, method: 'sms' };
};

/** One assessment's round trips and operations, then the start counted (admitted and started). */
async function start(
  rt: RoundTripStore,
  pumping: PumpingDefence,
  attempt: PumpingAttempt,
): Promise<{ trips: number; operations: number }> {
  rt.reset();
  const assessment = await pumping.assess(attempt);
  const seen = { trips: rt.trips.length, operations: rt.trips.flat().length };
  await pumping.admit(assessment, false);
  await pumping.started(assessment, `r${serial}`, now + 600_000);
  return seen;
}

describe('RangeHolds: a full balance remembered (likelyPast)', () => {
  it("an address's starts up to its share read no twin; the next reads them with its counts on the instance that filled it, one trip later once on another", async () => {
    const rt = roundTripStore({ clock: () => now });
    opened.push(rt);
    const [one, other] = [instance(rt), instance(rt)];
    const ip = '203.0.113.7';
    const within: { trips: number; operations: number }[] = [];
    for (let i = 0; i < GIVER_SHARES.address; i++) within.push(await start(rt, one, from(ip)));
    // Within its share, the last start too (its balance at the share, with it: room for none after).
    expect(within).toStrictEqual(Array.from({ length: GIVER_SHARES.address }, () => within[0]));
    expect(within[0]!.trips).toBe(1);
    // Past it: the twins come with the rest, in the same trip (more operations, no more trips).
    const past = await start(rt, one, from(ip));
    expect(past.trips).toBe(1);
    expect(past.operations).toBeGreaterThan(within[0]!.operations);
    // Another instance never saw it fill: the balances first, then the twins; from then on, with the rest.
    const first = await start(rt, other, from(ip));
    expect(first).toStrictEqual({ trips: 2, operations: past.operations });
    expect(await start(rt, other, from(ip))).toStrictEqual(past);
    // A neighbour on the same network, within its own share and the network's: no twin read.
    expect(await start(rt, one, from('203.0.113.8'))).toStrictEqual(within[0]);
  });

  it('a balance given room again (a verification gave back) is forgotten: the next start reads no twin', async () => {
    const rt = roundTripStore({ clock: () => now });
    opened.push(rt);
    const one = instance(rt);
    const ip = '203.0.113.9';
    let first = { trips: 0, operations: 0 };
    for (let i = 0; i < GIVER_SHARES.address; i++) {
      const seen = await start(rt, one, from(ip));
      if (i === 0) first = seen;
    }
    // Two starts' worth back to each of its balances (as verifications give back).
    const balances = new RangeStats(rt.inner, VERIFICATION_DEFAULTS.limits.pumping, SPEC_DATA_KEYS);
    for (const k of balances.shareKeys(giversOf(from(ip), 64)))
      await rt.inner.increment(k, -2 * START_WEIGHT, 14 * 86_400_000);
    // The remembered balance still says full: this start reads the twins, and sees room again.
    expect((await start(rt, one, from(ip))).operations).toBeGreaterThan(first.operations);
    expect(await start(rt, one, from(ip))).toStrictEqual(first);
  });
});

describe('RangeHolds: balances read', () => {
  it('a balance holding no count (a value another writer left) reads as 0, the others as they are', async () => {
    const rt = roundTripStore({ clock: () => now });
    opened.push(rt);
    const stats = new RangeStats(rt.store, VERIFICATION_DEFAULTS.limits.pumping, SPEC_DATA_KEYS);
    const givers = giversOf(from('198.51.100.4'), 64);
    const [client, network] = stats.shareKeys(givers);
    await rt.inner.set(client!, 'not-a-count', 60_000);
    await rt.inner.set(network!, String(3 * START_WEIGHT), 60_000);
    expect(await stats.readShares(givers)).toStrictEqual([0, 3 * START_WEIGHT]);
  });
});

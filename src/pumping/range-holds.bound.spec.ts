/**
 * RangeHolds' memory of full balances at its bound (10,000): a balance noted full again while the memory is
 * full is no new entry, and forgets nothing (RoundTripStore: a remembered giver's next start reads its twins
 * in its one trip, with more operations than a stranger's).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { PumpingDefence, type PumpingAttempt } from './pumping-defence.js';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { roundTripStore, type RoundTripStore } from '../../test/support/round-trip-store.js';
import type { Giver } from './giver-shares.js';
import { RangeStats } from './range-stats.js';

const quiet = { warn: () => undefined, error: () => undefined };
const now = Date.UTC(2026, 0, 6, 12);
const settings = { ...VERIFICATION_DEFAULTS.limits.pumping };
const opened: RoundTripStore[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((rt) => rt.inner.close()));
});

let serial = 0;
const from = (ip: string): PumpingAttempt => {
  serial += 1;
  const phoneNumber = `+7916${String(serial % 1000).padStart(3, '0')}${String(serial).padStart(4, '0')}`;
  return { phoneNumber, owner: undefined, clientKey: ip, ip, method: 'sms' };
};
const full = (id: string): Giver => ({ id, share: 0, network: false });

describe('RangeHolds: full balances remembered at the bound', () => {
  it('with 10,000 remembered, one of them noted full again forgets none of the others', async () => {
    const rt = roundTripStore({ clock: () => now });
    opened.push(rt);
    const stats = new RangeStats(rt.store, settings, SPEC_DATA_KEYS);
    const report = {
      logger: quiet,
      announce: () => undefined,
      metrics: { fraudSuspected: () => undefined, pumpingRefusal: () => undefined },
    };
    const one = new PumpingDefence(rt.store, settings, 64, report, stats);
    const operations = async (ip: string) => {
      rt.reset();
      await one.assess(from(ip));
      return rt.trips.flat().length;
    };
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

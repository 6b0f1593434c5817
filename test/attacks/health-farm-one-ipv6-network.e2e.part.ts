/**
 * Attack (issue 47's method health; the network of an IPv6 client is its /48): a farm on one IPv6 /48
 * (a tunnel broker or a hosting provider hands a customer one) gives each of 20 accounts a /64 of its
 * own, one subscriber's network for the per-client limits, and proves 20 of its own +7 926 numbers
 * there (a reverse call switched at once to SMS, the code typed: the host pays each SMS) in 10 minutes.
 * Were each /64 a network, its 20 rescues would fill the country's window alone and degrade the reverse
 * call on every quiet +7 prefix (+7 915's users offered the fallback at half its moment).
 *
 * The defence holds on main: the /48 is one network, which adds 2 sessions a week to a health cell (and
 * 10 a day to the figures). Checked: with an IPv6 client's network taken at /64, +7 915's reverse call is
 * degraded (26 500 → 12 917 ms).
 */
import { describe, expect, it } from '@jest/globals';
import { HEALTH_WINDOW_MS } from '../../src/account/method-health.js';
import { HEALTH_READ_MS } from '../../src/account/method-health.service.js';
import { PLATFORMS } from '../support/verification-app.js';
import { journeyFixture } from '../journeys/journey-host.js';
import { from, otherOperatorPhones, healthHost, probeUser, farmProof } from '../journeys/figure-learning.js';

const farmPhone = otherOperatorPhones(8);

describe.each(PLATFORMS)('method health: a farm on one IPv6 /48 (%s)', (platform) => {
  const fx = journeyFixture();

  it('20 own numbers proved from 20 /64s of one /48 leave +7 915’s reverse call healthy, at its moment', async () => {
    const { host, health } = await healthHost(fx, platform);
    /** A legitimate +7 915 mobile user of `auto`: the first method, its fallback moment, the health it saw. */
    const user = async () => ({ ...(await probeUser(fx, host)), health: health() });
    await fx.sb.advance(60_000);
    await user();
    await fx.sb.advance(HEALTH_WINDOW_MS + HEALTH_READ_MS);
    const before = await user();
    expect(before).toMatchObject({ method: 'reverse_flash_call', health: ['healthy@country'] });

    // 20 accounts, each on a /64 of its own in 2001:db8:4a7::/48, each proving one own number.
    for (let i = 0; i < 20; i++) {
      await farmProof(
        fx,
        host,
        farmPhone(),
        `farm-v6-${i}`,
        from(`2001:db8:4a7:${(i + 1).toString(16)}::1`),
        30_000,
      );
    }
    await fx.sb.advance(HEALTH_READ_MS);
    expect(await user()).toEqual(before);
  }, 120_000);
});

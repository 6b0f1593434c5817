/**
 * Attack (issue 47's method health): a method's health on an operator prefix is judged
 * on the prefix's own last 20 minutes once they hold HEALTH_MIN_SESSIONS (20) outcomes, else on its
 * country's. A rescued session (a step switched away from, its journey verified by a later step) is a
 * real user the method failed. The operator level is an operator cell, where a network adds at most
 * CELL_SHARE_PER_NETWORK (2) sessions a week; the country level is the country's counters, where it
 * adds its day share (10). A farm proving its own +7 926 numbers (a reverse call switched at once to
 * SMS, the SMS code typed: the host pays each SMS) from 2 /24s (2 addresses and 4 accounts each,
 * within every day share) fills the country's window alone: the reverse call is `degraded` on every
 * quiet +7 prefix (+7 915's users, whose own window is thin), its fallback offered at half its moment
 * (45 s → 22.5 s); 2 more /24s 20 minutes later and it is `demoted`: +7 915's mobile users get SMS
 * (3 RUB) first instead of the reverse call (0.25 RUB), which verifies as many of them.
 *
 * Expected: a network weighs in a country's health no more than in an operator cell's (or the
 * country level needs as many networks as an operator's 20 outcomes do): 4 networks' 40 proofs move
 * neither the moment nor the first method of another operator's users. Medium (steering: cost of every
 * user of a country's quiet prefixes; the attacker pays nothing but SIM cards, the host the SMS).
 */
import { describe, expect, it } from '@jest/globals';
import { DEMOTE_AFTER_MS, HEALTH_WINDOW_MS } from '../../src/account/method-health.js';
import { HEALTH_READ_MS } from '../../src/account/method-health.service.js';
import { PLATFORMS } from '../support/verification-app.js';
import { journeyFixture } from '../journeys/journey-host.js';
import { from, otherOperatorPhones, healthHost, probeUser, farmProof } from '../journeys/figure-learning.js';

const farmPhone = otherOperatorPhones(0);

describe.each(PLATFORMS)('method health: a farm’s rescued proofs at the country level (%s)', (platform) => {
  const fx = journeyFixture();

  it('40 own numbers proved by SMS after a reverse call, from 4 /24s, leave +7 915’s reverse call healthy and first', async () => {
    // A week of +7 915's mobile users: the reverse call verifies as many as SMS, sooner.
    const { host, health } = await healthHost(fx, platform);
    const user = () => probeUser(fx, host);
    /** A user's start, then the reverse call's health on +7 915 as it judged it. */
    const observe = async () => {
      const seen = await user();
      return { health: health(), user: seen };
    };
    /** A farm: `networks` /24s, each 10 of its own numbers, each a reverse call switched to SMS and proved. */
    const farm = async (networks: number[]) => {
      for (const net of networks)
        for (let i = 0; i < 10; i++) {
          const ip = from(`203.0.${net}.${1 + Math.floor(i / 5)}`);
          await farmProof(fx, host, farmPhone(), `farm-${net}-${Math.floor(i / 3)}`, ip);
        }
    };

    await fx.sb.advance(60_000);
    const before = await user();
    expect(before.method).toBe('reverse_flash_call');
    await fx.sb.advance(HEALTH_WINDOW_MS + HEALTH_READ_MS);
    expect(await user()).toEqual(before);
    expect(health()).toEqual(['healthy@country']);

    // Two /24s of the farm: 20 proofs on +7 926, each a reverse call left for SMS.
    await farm([10, 11]);
    await fx.sb.advance(HEALTH_READ_MS);
    const during = await observe();
    await fx.sb.advance(HEALTH_READ_MS);
    // Two more /24s, within the next 20 minutes.
    await farm([12, 13]);
    await fx.sb.advance(DEMOTE_AFTER_MS);
    const after = await observe();
    const untouched = { health: ['healthy@country'], user: before };
    expect({ during, after }).toEqual({ during: untouched, after: untouched });
  }, 180_000);
});

/**
 * Attack (issue 47's method health, 998813f: "a network adds at most 2 sessions a week to either
 * level"): the share is kept per week of the epoch (CELL_SHARE_PER_NETWORK: "so at most twice it in the
 * 7 days the cells are read"), and the weeks turn on Thursday 00:00 UTC. A method is degraded on one
 * window of 20 outcomes that dropped and demoted on another 20 minutes later: 40 outcomes, which 20
 * networks' week shares make and 10 networks' cannot. A farm proving its own +7 926 numbers (a reverse
 * call switched at once to SMS, the code typed: the host pays each SMS) from 10 /24s sends 2 from each
 * in the last half hour of a week, and 2 from each in the first minutes of the next: 40 proofs in 25
 * minutes, each within its week's share. The first 20 degrade the reverse call on every quiet +7 prefix
 * (+7 915's users offered the fallback at half its moment, 26 500 → 12 917 ms), the next 20 demote it:
 * +7 915's mobile users are sent to SMS (3 RUB) first instead of the reverse call (0.25 RUB).
 *
 * Expected: a network adds at most 1 session to a health cell in a window and the one before
 * (HEALTH_SHARE_PER_NETWORK; a week's share left the health blind to an outage of users whose networks
 * had counted that week), so 10 networks' 40 proofs across the week's turn make no window of 20: +7 915's
 * users still get the reverse call first, at its moment, before the turn and after it. Low to medium
 * (steering, at each week's turn, with half the networks; the host pays the farm's SMS).
 */
import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { HEALTH_WINDOW_MS } from '../../src/account/method-health.js';
import { HEALTH_READ_MS } from '../../src/account/method-health.service.js';
import { PLATFORMS } from '../support/verification-app.js';
import { journeyFixture, journeyHost } from '../journeys/journey-host.js';
import {
  from,
  seedFigures,
  storeOf,
  otherOperatorPhones,
  probeUser,
  farmProof,
} from '../journeys/figure-learning.js';

const WEEK_MS = 7 * 24 * 3_600_000;
const MINUTE = 60_000;
const farmPhone = otherOperatorPhones(7);

describe.each(PLATFORMS)('method health: a farm’s rescued proofs across the week’s turn (%s)', (platform) => {
  const fx = journeyFixture();

  it('40 own numbers proved by SMS after a reverse call, from 10 /24s across the week’s turn, leave +7 915’s reverse call healthy and first', async () => {
    const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
    const stats = host.app.get(MethodStats, { strict: false });
    const account = host.app.get(VerificationAccountService, { strict: false });
    // An hour before the week's turn (Thursday 00:00 UTC).
    let turn = (Math.floor(fx.sb.now() / WEEK_MS) + 1) * WEEK_MS;
    if (turn - fx.sb.now() < 2 * 60 * MINUTE) turn += WEEK_MS;
    await fx.sb.advance(turn - 60 * MINUTE - fx.sb.now());
    // A week of +7 915's mobile users: the reverse call verifies as many as SMS, sooner.
    await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
    const user = () => probeUser(fx, host);
    const health = () =>
      account
        .methodHealth()
        .filter((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')
        .map((h) => `${h.state}@${h.level}`);
    /** A user's start, then the reverse call's health on +7 915 as it judged it. */
    const observe = async () => {
      const seen = await user();
      return { health: health(), user: seen };
    };
    /** A farm: `networks` /24s, each 2 of its own numbers, each a reverse call switched to SMS and proved. */
    const farm = async (networks: number[]) => {
      for (const net of networks)
        for (let i = 0; i < 2; i++) {
          await farmProof(fx, host, farmPhone(), `farm-${net}`, from(`203.0.${net}.1`));
        }
    };

    await fx.sb.advance(60_000);
    const before = await user();
    expect(before.method).toBe('reverse_flash_call');
    await fx.sb.advance(HEALTH_WINDOW_MS + HEALTH_READ_MS);
    expect(await user()).toEqual(before);
    expect(health()).toEqual(['healthy@country']);

    // The last half hour of the week: 10 /24s of the farm, 2 proofs each, on +7 926.
    const nets = Array.from({ length: 10 }, (_, i) => 10 + i);
    await fx.sb.advance(turn - 30 * MINUTE - fx.sb.now());
    await farm(nets);
    await fx.sb.advance(HEALTH_READ_MS);
    const during = await observe();
    // The week turns: a user just after, then the same 10 /24s, 2 proofs each again.
    await fx.sb.advance(turn + 30_000 - fx.sb.now());
    await user();
    await fx.sb.advance(30_000);
    await farm(nets);
    await fx.sb.advance(turn + HEALTH_WINDOW_MS + 2 * HEALTH_READ_MS - fx.sb.now());
    const after = await observe();
    // A network adds 1 to a health window (HEALTH_SHARE_PER_NETWORK): 10 networks' 20 proofs make no window
    // of HEALTH_MIN_SESSIONS outcomes, before the week's turn or after it.
    expect(during).toEqual({
      health: ['healthy@country'],
      user: { method: 'reverse_flash_call', afterMs: during.user.afterMs },
    });
    // Not degraded: its moment is not halved (the farm's first proofs of the week teach it as a few users).
    expect(during.user.afterMs).toBeGreaterThan(0.9 * before.afterMs);
    expect(after).toEqual({
      health: ['healthy@country'],
      user: { method: 'reverse_flash_call', afterMs: after.user.afterMs },
    });
  }, 180_000);
});

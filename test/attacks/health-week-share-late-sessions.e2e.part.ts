/**
 * Attack (2d64ec6: "a network's cell share is of the last 7 days", CELL_SHARE_PER_NETWORK = 2 sessions
 * of a method a network adds to a figure cell "in any 7 days"): the 7 days are estimated from the epoch
 * week's count and the previous week's, as if the previous week's sessions were spread over it
 * (`previous × the share of the week still to come`, rounded). A network that spends its share in the
 * last half hour of a week has it counted, 5 days and 7 hours into the next, as 2 × 0.24 = 0.49, rounded
 * to 0: a fresh share of 2, while the first 2 are still in the last 7 days' figures.
 *
 * Here: one farm network (a /24) proves 2 of its own +7 926 numbers (a reverse call switched to SMS, the
 * code typed: the host pays each SMS) half an hour before the week turns (Thursday 00:00 UTC), and 2
 * more 5 days 7 hours later. The reverse call's week in its country's health cell (`7~*`), as
 * `methodHealth()` reports it for a +7 915 user: 4 outcomes of that one network, all rescued (on main:
 * week `{ ended: 4 }`; checked: with the 2 more a day into the week, `{ ended: 2 }`; half way through
 * it, 1 more counts). Twice the share: a farm of 10 networks so puts 40 outcomes in the 7 days of each
 * cell it reaches where the share allows it 20, the same weight for half the networks in the figures
 * the chooser, the fallback moment and the health's week are read from.
 *
 * Expected: a network's sessions in any 7 days are at most CELL_SHARE_PER_NETWORK in a cell, its
 * previous week's late sessions counted as long as they are within the last 7 days. Low to medium
 * (a farm's weight in the figures doubled by timing; the host pays the farm's SMS).
 */
import { describe, expect, it } from '@jest/globals';
import { HEALTH_WINDOW_MS } from '../../src/account/method-health.js';
import { HEALTH_READ_MS } from '../../src/account/method-health.service.js';
import { PLATFORMS } from '../support/verification-app.js';
import { journeyFixture } from '../journeys/journey-host.js';
import { farmProof, from, healthHost, otherOperatorPhones, probeUser } from '../journeys/figure-learning.js';

const DAY_MS = 24 * 3_600_000;
const WEEK_MS = 7 * DAY_MS;
const MINUTE = 60_000;
const farmPhone = otherOperatorPhones(4);

describe.each(PLATFORMS)('a network’s cell share of the last 7 days, at the week’s turn (%s)', (platform) => {
  const fx = journeyFixture();

  it('a network’s 2 proofs before the week turns and 2 more 5 days later leave 2 of it in the country’s health cell, not 4', async () => {
    // An hour before the week's turn (Thursday 00:00 UTC).
    let turn = (Math.floor(fx.sb.now() / WEEK_MS) + 1) * WEEK_MS;
    if (turn - fx.sb.now() < 2 * 60 * MINUTE) turn += WEEK_MS;
    await fx.sb.advance(turn - 60 * MINUTE - fx.sb.now());
    // No week of the reverse call seeded: its health cells hold the farm's sessions only.
    const { host, account } = await healthHost(fx, platform, 0);
    const net = from('203.0.10.1');
    await fx.sb.advance(turn - 30 * MINUTE - fx.sb.now());
    for (let i = 0; i < 2; i++) await farmProof(fx, host, farmPhone(), 'farm-a', net);
    // 5 days and 7 hours into the next week, 2 more of the same network (another of its callers).
    await fx.sb.advance(turn + 5 * DAY_MS + 7 * 3_600_000 - fx.sb.now());
    for (let i = 0; i < 2; i++) await farmProof(fx, host, farmPhone(), 'farm-b', net);
    // A +7 915 user, then another a window later: its prefix is judged by its country's window and week.
    await probeUser(fx, host);
    await fx.sb.advance(HEALTH_WINDOW_MS + HEALTH_READ_MS);
    await probeUser(fx, host);
    const week = account
      .methodHealth()
      .filter((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')
      .map((h) => ({ level: h.level, ended: h.week.ended }));
    // All 4 within the last 7 days (5 days 8 hours apart at most): a network's share is 2 of them.
    expect(week).toEqual([{ level: 'country', ended: 2 }]);
  }, 180_000);
});

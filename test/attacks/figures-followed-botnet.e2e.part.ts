/**
 * Attack (lane attack-n, issue 47's "learning nobody can steer"): a page that followed the status is
 * evidence of a real user, so a free reverse-call start that nobody completes, polled once 5 s after
 * it, teaches the fallback moment (when real users give up). Each giver's share is bounded per day
 * (3 a caller, 5 an address, 10 a network), but no more: 150 free starts from 15 networks (50
 * addresses, each within every share of a day), each polled once 6 s after it, sink the +7 reverse
 * call's moment learned from 20 real users (15 verified at 25–39 s) from 36 s to the 10 s floor, and
 * every legitimate user is offered the fallback (a paid SMS) that much sooner, for the 7 days the
 * figures are read. It costs the attacker 15 /24s for a day and the host nothing (free starts, one
 * read each). test/journeys/learning-steering tried the halves apart (150 networks not following; one
 * network following), not together.
 *
 * Expected: the legitimate users' moment moves by at most 25 % (issue 47's bound). Medium (steering:
 * cost and time of every user of a country). Fails on main (d9234d1c).
 */
import { describe, it } from '@jest/globals';
import { PLATFORMS } from '../support/verification-app.js';
import {
  HOUR,
  EXPIRY_MS,
  abandonedStarts,
  taughtHost,
  expectMomentHeld,
} from '../journeys/figure-learning.js';
import { journeyFixture } from '../journeys/journey-host.js';

describe.each(PLATFORMS)('a botnet following its own free starts (%s)', (platform) => {
  const fx = journeyFixture();

  it.each([
    ['150 networks', (i: number) => `203.${i}.7.1`],
    // Within every giver's day share: 3 starts an address, 10 a network.
    ['15 networks', (i: number) => `203.${Math.floor(i / 10)}.7.${Math.floor((i % 10) / 3) + 1}`],
  ])(
    '150 followed free starts from %s leave the legitimate users’ fallback moment where it was',
    async (_, ipOf) => {
      const { host, before } = await taughtHost(fx, platform);

      // One free start per address, each in a network of its own, each polled once 6 s after it.
      await abandonedStarts(fx, host, 150, ipOf, true);
      await fx.sb.advance(EXPIRY_MS);
      await fx.sb.webhooksIdle();
      // What the figures say once the damping has followed them: a read after a quiet while moves
      // at most 5 minutes of its pace, so users come every 5 minutes for an hour.
      await fx.sb.advance(2 * HOUR);
      await expectMomentHeld(fx, host, before);
    },
    120_000,
  );
});

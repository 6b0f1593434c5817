/**
 * Attack (lane attack-n, issue 47: "a jump in a learned moment beyond its recent range is damped and
 * reported, not adopted at once"): the damping is each instance's memory (FallbackTiming's adopted
 * moments), and an instance younger than SETTLED_AFTER_MS adopts what the figures say. Two hosts on one
 * Redis: the first has followed the reverse call's moment (36 s) for a quarter of an hour when poisoned
 * figures (followed free starts from many networks, see figures-followed-botnet) say 10 s; it moves
 * toward it at its bounded pace. An instance booted then (a deploy, an autoscaled replica, a restart
 * after a crash) offers every user it serves the fallback at 10 s at once, and reports nothing.
 *
 * Expected: a new instance on the same store starts from the moment the deployment adopted (kept in
 * the store), so its users get what the running instance gives them, within its damping. Low (the
 * damping is a second line behind the evidence rules; steering of the fallback moment). Fails on main
 * (d9234d1c).
 */
import { describe, expect, it } from '@jest/globals';
import { sharedRedisUrl } from '../support/redis-server.js';
import { PLATFORMS } from '../support/verification-app.js';
import { LEARNING, EXPIRY_MS, realUsers, abandonedStarts, momentFor } from '../journeys/figure-learning.js';
import { journeyFixture, journeyHost, secondInstance } from '../journeys/journey-host.js';

describe.each(PLATFORMS)('a new instance and a damped moment (%s)', (platform) => {
  const fx = journeyFixture();

  it('an instance booted on the same Redis gives the moment the running one adopted', async () => {
    const store = { url: sharedRedisUrl(), keyPrefix: `damp-${process.pid}-${Date.now()}:` };
    const first = await journeyHost(fx, platform, { ...LEARNING, store }, {}, { trustProxy: true });
    await realUsers(fx, first, 'reverse_flash_call', 51);
    // The first instance follows the moment for a quarter of an hour: its range is settled.
    for (let read = 0; read < 10; read++) {
      await momentFor(fx, first);
      await fx.sb.advance(60_000);
    }
    const before = await momentFor(fx, first);
    expect(before).toBeGreaterThan(20_000);

    await abandonedStarts(
      fx,
      first,
      150,
      (i) => `203.${Math.floor(i / 10)}.7.${Math.floor((i % 10) / 3) + 1}`,
      true,
    );
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    const running = await momentFor(fx, first);

    // A second instance of the same deployment: same account, keys and Redis.
    const second = await secondInstance(fx, platform, { ...LEARNING, store });
    const fresh = await momentFor(fx, second);
    expect({ running, fresh, apart: Math.abs(fresh - running) <= running * 0.1 }).toEqual({
      running,
      fresh,
      apart: true,
    });
  }, 180_000);
});

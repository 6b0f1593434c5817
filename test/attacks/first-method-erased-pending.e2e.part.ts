/**
 * Attack (lane attack-p, issue 47's first method on thin evidence, b678c0cd): a cell's sessions
 * started and not ended count as not verified (`pending`: completion = verified ÷ (ended + pending)).
 * A session erased while pending (VerificationErasure.forget: each bot account asks the host to
 * delete its data, as a user may) keeps its counted start, and its end is never counted (its record
 * and its figure evidence are gone): it is `pending` for the 7 days the figures are read, not the 5
 * minutes of first-method-pending-free-starts. 100 free reverse-call starts from 50 /24s, each of its
 * own account, erased, move the mobile users of +7 915 from the reverse call to SMS (paid) for a week.
 * Before b678c0cd a start that never ended weighed nothing.
 *
 * Expected: a session erased while pending weighs nothing in the first method once its life is past:
 * mobile stays on the reverse call. Medium (steering for a week: every mobile user of the cell sent to
 * the paid method first). Fails on attack-base (e6f8de49).
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { FIRST_METHOD_MIN_TTL_MS } from '../../src/verification/first-method.chooser.js';
import { PLATFORMS } from '../support/verification-app.js';
import { freshPhone, journeyFixture, journeyHost, start } from '../journeys/journey-host.js';
import { EXPIRY_MS, HOUR, from, storeOf, seedFigures } from '../journeys/figure-learning.js';

describe.each(PLATFORMS)('first method: a bot’s free starts erased while pending (%s)', (platform) => {
  const fx = journeyFixture();

  it('100 free starts erased while pending leave mobile users on the reverse call a day later', async () => {
    const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
    const stats = host.app.get(MethodStats, { strict: false });
    await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 20_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 10_000);
    const mobileFirst = async () =>
      (
        await start(
          host,
          { phone_number: freshPhone(), method: 'auto', device: 'mobile' },
          'probe',
          from('192.0.2.1'),
        )
      ).body.method;
    await fx.sb.advance(FIRST_METHOD_MIN_TTL_MS);
    expect(await mobileFirst()).toBe('reverse_flash_call');

    // The bot: free reverse calls on +7 915, each of its own account, 2 an address, each address in a /24 of its own (50).
    const erasure = host.app.get(VerificationErasure, { strict: false });
    for (let i = 0; i < 100; i++) {
      const res = await start(
        host,
        { phone_number: freshPhone(), method: 'reverse_flash_call', device: 'mobile' },
        `bot-${platform}-${i}`,
        from(`203.${Math.floor(i / 2)}.10.7`),
      );
      expect(res.status).toBe(201);
    }
    // Each account asks its data deleted, while its session is pending.
    for (let i = 0; i < 100; i++) await erasure.forget({ owner: `bot-${platform}-${i}` });
    // The sessions expire upstream; a day later the choice is made again.
    await fx.sb.advance(EXPIRY_MS);
    await fx.sb.webhooksIdle();
    await fx.sb.advance(24 * HOUR);
    expect(await mobileFirst()).toBe('reverse_flash_call');
  }, 120_000);
});

/**
 * Attack (lane attack-p, issue 47's first method on thin evidence, b678c0cd): a cell's sessions
 * started and not ended now count as not verified (`pending`, completion = verified ÷ (ended +
 * pending)). A free reverse-call start nobody completes costs its giver nothing, and once it ends it
 * is `unproven` (left out of what the policy learns); but while it is pending it sinks the free
 * method's completion in the cell. 100 abandoned free starts from 50 /24s (2 each: within every
 * giver's day share and the network's week share of a cell) move the mobile users of +7 915 from
 * the reverse call (cheap, verifying as many as SMS in the figures) to SMS (paid) for as long as the
 * bot keeps 40 starts pending, and the choice (re-read within 72 s on these figures) follows the bot
 * that fast. Before b678c0cd a start not yet ended weighed nothing.
 *
 * Expected: a choice moves no more on free starts nobody completes than before: mobile stays on
 * the reverse call. Medium (steering: every mobile user of the cell sent to the paid method first;
 * the host pays SMS where the reverse call verified as many). Fails on attack-base (e6f8de49).
 */
import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { FIRST_METHOD_MIN_TTL_MS, FIRST_METHOD_TTL_MS } from '../../src/verification/first-method.chooser.js';
import { PLATFORMS } from '../support/verification-app.js';
import { freshPhone, journeyFixture, journeyHost, start } from '../journeys/journey-host.js';
import { from, storeOf, seedFigures } from '../journeys/figure-learning.js';

const BOT = 100;
describe.each(PLATFORMS)('first method: pending free starts of a bot (%s)', (platform) => {
  const fx = journeyFixture();

  it('100 abandoned free starts from 50 /24s leave mobile users on the reverse call', async () => {
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

    // The bot: free reverse calls on +7 915, 2 an address, each address in a /24 of its own (50).
    for (let i = 0; i < BOT; i++) {
      const res = await start(
        host,
        { phone_number: freshPhone(), method: 'reverse_flash_call', device: 'mobile' },
        null,
        from(`203.${Math.floor(i / 2)}.9.7`),
      );
      expect(res.status).toBe(201);
    }
    // Past the life of the choice (72 ended behind mobile: 72 ÷ 300 of FIRST_METHOD_TTL_MS), before
    // the bot's sessions expire.
    await fx.sb.advance(FIRST_METHOD_TTL_MS / 4);
    expect(await mobileFirst()).toBe('reverse_flash_call');
  }, 120_000);
});

/**
 * Attack (bad luck; issue 47's method health: "a demoted method comes back when it
 * recovers"): a method is `degraded` (its fallback offered at half its moment) when its last 20
 * minutes' completion drops below 70 % of its week's, and `healthy` again only on a window that holds
 * HEALTH_MIN_SESSIONS (20) outcomes at 85 % or more. A demoted method unjudged for 30 minutes is tried
 * again; a degraded one unjudged stays degraded. A quiet host (+7 users one every 5 minutes, each from
 * a network of its own) has a 20-minute outage of the reverse call: 20 users switch to SMS and are
 * verified there (a busy hour). Then the reverse call works again and every user completes it at
 * 20 s, but no 20 minutes hold 20 outcomes: 6 hours later it is still `degraded`, and every user is
 * offered the paid fallback at half the moment the figures teach.
 *
 * Expected: a degraded method whose users complete it again is healthy again within a few windows,
 * however quiet the host (its fallback at the learned moment). Medium (steering of the fallback
 * moment for every quiet prefix of a country, for as long as the host stays quiet: hours, days; a
 * farm's one burst does the same, see health-country-farm-rescues).
 */
import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { HEALTH_WINDOW_MS } from '../../src/account/method-health.js';
import { HEALTH_READ_MS } from '../../src/account/method-health.service.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import {
  freshPhone,
  journeyFixture,
  journeyHost,
  sessionIds,
  start,
  status,
  switchMethod,
} from '../journeys/journey-host.js';
import { from, seedFigures, storeOf, toBeforeMidnight } from '../journeys/figure-learning.js';

const HOUR = 3_600_000;
/** When each user after the outage completes the reverse call. */
const USERS_DONE_AT_MS = 20_000;

describe.each(PLATFORMS)('method health on a quiet host after an outage (%s)', (platform) => {
  const fx = journeyFixture();

  it('a reverse call its users complete again is healthy again, its fallback at the learned moment', async () => {
    // The outage straddles a UTC midnight: the window that degrades the method crosses it.
    await toBeforeMidnight(fx, 22 * 60_000);
    const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
    const stats = host.app.get(MethodStats, { strict: false });
    const account = host.app.get(VerificationAccountService, { strict: false });
    await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
    let users = 0;
    /** A +7 915 mobile user of `auto`, from a network of its own: the first method, its fallback moment, and how it ends. */
    const user = async (ends: 'calls' | 'switches' | 'leaves') => {
      users += 1;
      const owner = `user-${users}`;
      const ip = from(`198.18.${users % 250}.${1 + Math.floor(users / 250)}`);
      const phone = freshPhone();
      const res = await start(host, { phone_number: phone, method: 'auto', device: 'mobile' }, owner, ip);
      expect(res.status).toBe(201);
      const at = fx.sb.now();
      const body = (await status(host, res.body.verification_id, owner)).body;
      const seen = { method: res.body.method, afterMs: Date.parse(String(body.fallback_available_at)) - at };
      await fx.sb.advance(20_000);
      if (ends === 'calls') await fx.sb.call(sessionIds(fx.sb, phone)[0]!, phone);
      if (ends === 'switches') {
        expect((await switchMethod(host, res.body.verification_id, 'sms', owner, ip)).status).toBe(201);
        const code = String(fx.sb.getSession(sessionIds(fx.sb, phone).at(-1)!)!.code);
        const proved = await call(
          host.url,
          'POST',
          '/verification/check',
          { verification_id: res.body.verification_id, code },
          { 'x-user': owner, ...ip },
        );
        expect(proved.body.status).toBe('verified');
      }
      await fx.sb.webhooksIdle();
      return seen;
    };
    const health = () =>
      account
        .methodHealth()
        .filter((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')
        .map((h) => h.state);

    const before = await user('calls');
    expect(before.method).toBe('reverse_flash_call');
    await fx.sb.advance(HEALTH_WINDOW_MS);
    await user('calls');
    // The outage: 20 users in 10 minutes, none gets the call through; each switches to SMS and is verified.
    for (let i = 0; i < 20; i++) {
      await user('switches');
      await fx.sb.advance(10_000);
    }
    await fx.sb.advance(HEALTH_READ_MS);
    const outage = await user('calls');
    // Degraded, as it should be: the fallback at half the moment.
    expect({ health: health(), halved: outage.afterMs < 0.75 * before.afterMs }).toEqual({
      health: ['degraded'],
      halved: true,
    });

    // The reverse call works again: a user every 5 minutes for 6 hours, each completing it at 20 s.
    const until = fx.sb.now() + 6 * HOUR;
    let after = outage;
    while (fx.sb.now() < until) {
      await fx.sb.advance(5 * 60_000 - USERS_DONE_AT_MS);
      after = await user('calls');
    }
    // The learned moment follows its users (each now done at 20 s, the outage's 20 in the week too); a
    // degraded method's would be half of it, at the floor (10 s).
    const moments = { before: before.afterMs, after: after.afterMs };
    expect({
      health: health(),
      first: after.method,
      moments,
      halved: moments.after < 0.75 * USERS_DONE_AT_MS,
    }).toEqual({
      health: ['healthy'],
      first: 'reverse_flash_call',
      moments,
      halved: false,
    });
  }, 240_000);
});

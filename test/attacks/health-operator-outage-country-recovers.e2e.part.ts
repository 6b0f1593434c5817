/**
 * Attack (bad luck; issue 47's method health, 998813f: "the country level is a figure cell"): a
 * method's health on an operator prefix is judged on the prefix's own last 20 minutes while they hold
 * HEALTH_MIN_SESSIONS (20) outcomes, else on its country's (`7~*`, every operator). An outage of the
 * reverse call on one operator (+7 915: three users every 2 minutes, each gets it first, never
 * completes it, switches to SMS and is verified there), in a country whose other operators' users
 * complete it (+7 926: four a minute), degrades, then demotes it on +7 915's own figures. The
 * demotion sends +7 915's users to SMS first, so +7 915's own window thins below 20 within minutes;
 * the prefix is then judged on its country's window, where +7 926's users complete the reverse call:
 * `recovered`, healthy, first again at once (not 30 minutes later, and not `degraded`), while +7 915's
 * outage goes on. Its next users fail it again at the full fallback moment, it is degraded and demoted
 * again, and so on: the health never settles, and most of +7 915's users go first to a method that
 * cannot verify them.
 *
 * Expected: a method demoted on its operator's own figures stays out of first place until its retry
 * (30 minutes) and comes back `degraded`, as the rules say; another operator's users do not judge it
 * recovered. Over 2 hours of the outage, after its first demotion, no more of +7 915's users are sent to
 * the reverse call first than its retries allow (one window of 20 minutes in every 50: 40 %, here ≤ 45 %),
 * and no `demoted → healthy` change is announced. Medium (users' time: each sent first to the dead method
 * waits its fallback moment; an operator's outage is never settled, its health events flap).
 */
import { describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { VerificationOpsEventName, type MethodHealthEvent } from '../../src/core/verification-events.js';
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
import { from, HOUR, seedFigures, storeOf } from '../journeys/figure-learning.js';

let otherSerial = 0;
/** A +7 926 number (another operator of the same country). */
const otherPhone = () =>
  `+7926${String(process.pid % 1000).padStart(3, '0')}${String(++otherSerial).padStart(4, '0')}`;

describe.each(PLATFORMS)('method health: one operator’s outage in a busy country (%s)', (platform) => {
  const fx = journeyFixture();

  it('a reverse call demoted on +7 915’s own outage stays out of first place until its retry, whatever +7 926’s users do', async () => {
    const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
    const stats = host.app.get(MethodStats, { strict: false });
    const account = host.app.get(VerificationAccountService, { strict: false });
    const events: string[] = [];
    host.app.get(EventEmitter2).on(VerificationOpsEventName.methodHealth, (event: MethodHealthEvent) => {
      if (event.method === 'reverse_flash_call' && event.prefix === '+7915')
        events.push(`${event.previous}>${event.state}@${event.level}`);
    });
    // A week of +7 915's mobile users (in its country's figures too): the reverse call verifies as many, sooner.
    await seedFigures(fx, stats, 'sms', 'mobile', 400, 340, 40_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 400, 320, 25_000);
    let users = 0;
    /**
     * A mobile user of `auto` from a network of its own: on +7 926 (`other`) it completes the reverse
     * call; on +7 915 during the outage it cannot, switches to SMS and is verified there.
     */
    const user = async (who: 'outage' | 'other') => {
      users += 1;
      const owner = `user-${users}`;
      const ip = from(`${11 + Math.floor(users / 250)}.${users % 250}.7.1`);
      const phone = who === 'other' ? otherPhone() : freshPhone();
      const res = await start(host, { phone_number: phone, method: 'auto', device: 'mobile' }, owner, ip);
      expect(res.status).toBe(201);
      const first = res.body.method as string;
      const at = fx.sb.now();
      const body = (await status(host, res.body.verification_id, owner)).body;
      const fallbackMs = Date.parse(String(body.fallback_available_at)) - at;
      await fx.sb.advance(10_000);
      if (first === 'reverse_flash_call' && who === 'other')
        await fx.sb.call(sessionIds(fx.sb, phone)[0]!, phone);
      else {
        if (first !== 'sms')
          expect((await switchMethod(host, res.body.verification_id, 'sms', owner, ip)).status).toBe(201);
        const code = String(fx.sb.getSession(sessionIds(fx.sb, phone).at(-1)!)!.code);
        const check = { verification_id: res.body.verification_id, code };
        const proved = await call(host.url, 'POST', '/verification/check', check, { 'x-user': owner, ...ip });
        expect(proved.body.status).toBe('verified');
      }
      await fx.sb.webhooksIdle();
      return { first, fallbackMs };
    };
    const health = () =>
      account.methodHealth().find((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')?.state;
    /**
     * Two +7 926 users who complete the reverse call 10 s after their start, each 10 s after the other: their
     * outcomes in the figures as their journeys would put them (the probe above is such a user over HTTP).
     */
    const twoOthers = async () => {
      for (let i = 0; i < 2; i++) {
        await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 1, 1, 10_000, otherPhone);
        await fx.sb.advance(10_000);
      }
    };
    /** Two minutes: three +7 915 users (what each got first), eight +7 926 users. */
    const twoMinutes = async () => {
      const seen: string[] = [];
      for (let i = 0; i < 4; i++) {
        if (i < 3) seen.push((await user('outage')).first);
        await twoOthers();
      }
      await fx.sb.advance(2 * 60_000 - (fx.sb.now() % (2 * 60_000)));
      return seen;
    };

    await fx.sb.advance(2 * 60_000 - (fx.sb.now() % (2 * 60_000)));
    // Before the outage, +7 915's users get the reverse call first.
    const probe = await user('other');
    expect(probe.first).toBe('reverse_flash_call');
    // The outage on +7 915, until the reverse call is demoted there.
    let demotedAt: number | undefined;
    const outageStart = fx.sb.now();
    while (demotedAt === undefined && fx.sb.now() < outageStart + HOUR) {
      await twoMinutes();
      if (health() === 'demoted') demotedAt = fx.sb.now();
    }
    expect(events.slice(0, 2)).toEqual(['healthy>degraded@operator', 'degraded>demoted@operator']);
    // Two more hours of the same outage: which method +7 915's users are sent to first.
    const after: string[] = [];
    while (fx.sb.now() < demotedAt! + 2 * HOUR) after.push(...(await twoMinutes()));
    const deadFirst = after.filter((first) => first === 'reverse_flash_call').length;
    const seen = {
      users: after.length,
      deadFirst,
      deadShare: Math.round((100 * deadFirst) / after.length),
      healthChanges: events.length,
      backHealthy: events.filter((e) => e.startsWith('demoted>healthy')),
    };
    expect(seen).toEqual({
      ...seen,
      deadShare: Math.min(seen.deadShare, 45),
      backHealthy: [],
    });
  }, 300_000);
});

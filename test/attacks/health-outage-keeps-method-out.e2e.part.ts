/**
 * Attack (bad luck; issue 47: "promoted back when it recovers"): a 3-hour outage of the reverse call on
 * +7 915 for its mobile users (two a minute, each gets the reverse call first while it is, never
 * completes it, switches to SMS and types its code there) degrades it, demotes it, and fails each
 * retry. The outage ends. On a quiet host (a user every 5 minutes) it is tried again 30 minutes after
 * its last demotion, but only if the 7 days' figures the first method is chosen from still hold it
 * first: the retries' failures (sessions started while it was degraded) must teach its health, not
 * those figures. Before they were left out: 73 users over the next 6 hours, all sent to SMS first.
 */
import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { RETRY_AFTER_MS } from '../../src/account/method-health.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import {
  freshPhone,
  journeyFixture,
  journeyHost,
  sessionIds,
  start,
  switchMethod,
} from '../journeys/journey-host.js';
import { from, HOUR, seedFigures, storeOf } from '../journeys/figure-learning.js';

describe.each(PLATFORMS)(
  'method health: a method back from an outage is tried first again (%s)',
  (platform) => {
    const fx = journeyFixture();

    it('after the outage, the reverse call goes first again within an hour of its retry, and stays first', async () => {
      const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
      const stats = host.app.get(MethodStats, { strict: false });
      const account = host.app.get(VerificationAccountService, { strict: false });
      // A quiet host's week on +7 915's mobile users.
      await seedFigures(fx, stats, 'sms', 'mobile', 60, 51, 40_000);
      await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 60, 48, 25_000);
      let users = 0;
      /** A +7 915 mobile user from a network of its own on `auto`: completes the reverse call unless `outage`. */
      const user = async (outage: boolean) => {
        users += 1;
        const owner = `user-${users}`;
        const ip = from(`198.18.${users % 250}.${1 + Math.floor(users / 250)}`);
        const phone = freshPhone();
        const res = await start(host, { phone_number: phone, method: 'auto', device: 'mobile' }, owner, ip);
        expect(res.status).toBe(201);
        const first = res.body.method as string;
        if (first === 'reverse_flash_call' && !outage) {
          await fx.sb.advance(20_000);
          await fx.sb.call(sessionIds(fx.sb, phone)[0]!, phone);
        } else {
          if (first !== 'sms') {
            await fx.sb.advance(10_000);
            expect((await switchMethod(host, res.body.verification_id, 'sms', owner, ip)).status).toBe(201);
          }
          // The SMS arrives and its code is typed 35 s after its start (the seeded week's SMS: 40 s).
          await fx.sb.advance(35_000);
          const code = String(fx.sb.getSession(sessionIds(fx.sb, phone).at(-1)!)!.code);
          const body = { verification_id: res.body.verification_id, code };
          const proved = await call(host.url, 'POST', '/verification/check', body, {
            'x-user': owner,
            ...ip,
          });
          expect(proved.body.status).toBe('verified');
        }
        await fx.sb.webhooksIdle();
        return first;
      };
      const health = () =>
        account.methodHealth().find((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')?.state;
      const until = async (step: number) => fx.sb.advance(step - (fx.sb.now() % step));
      for (let i = 0; i < 20; i++) {
        expect(await user(false)).toBe('reverse_flash_call');
        await until(60_000);
      }
      // The outage: two users a minute for 3 hours; the reverse call is demoted, tried again, demoted again.
      const outageEnds = fx.sb.now() + 3 * HOUR;
      const states = new Set<string | undefined>();
      while (fx.sb.now() < outageEnds) {
        for (let i = 0; i < 2; i++) await user(true);
        states.add(health());
        await until(60_000);
      }
      expect(states).toEqual(new Set(['healthy', 'degraded', 'demoted']));
      // Quiet again: a user every 5 minutes for 6 hours, the reverse call working.
      const firsts: { at: number; first: string }[] = [];
      while (fx.sb.now() < outageEnds + 6 * HOUR) {
        firsts.push({ at: fx.sb.now(), first: await user(false) });
        await until(300_000);
      }
      // Demoted at worst when the outage ends: tried again RETRY_AFTER_MS later, first again within the hour.
      const back = firsts.find(({ first }) => first === 'reverse_flash_call');
      expect(back?.at).toBeLessThanOrEqual(outageEnds + RETRY_AFTER_MS + HOUR);
      // Once back, it stays first: the last hour's users all get it first, and it is healthy.
      const lastHour = firsts.filter(({ at }) => at >= outageEnds + 5 * HOUR).map(({ first }) => first);
      expect(new Set(lastHour)).toEqual(new Set(['reverse_flash_call']));
      expect(health()).toBe('healthy');
    }, 300_000);
  },
);

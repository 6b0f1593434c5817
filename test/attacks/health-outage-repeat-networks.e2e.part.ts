/**
 * Bad luck (issue 47: "demote within the hour"): a host's users come from few networks (a mobile
 * operator's carrier-grade NAT: 75 /24s here), the same networks every day. A network's share of a health
 * cell was CELL_SHARE_PER_NETWORK (2) sessions a week, as for the choice's cells: once each network had
 * counted 2 that week, the health cells got no session of theirs, so an outage of the reverse call on
 * +7 915 left it healthy and first for every user, however long it went on (the orchestration bench's
 * outage row: flash calls never demoted, their users sent to them first).
 *
 * Expected: a network counts one session an hour (HEALTH_CLAIM_MS) in the health cells, every hour: 75
 * networks' users fill the windows, and the reverse call is demoted within the hour of the outage's start (a
 * mobile user of another network then gets another method first).
 */
import { describe, expect, it } from '@jest/globals';
import { HEALTH_WINDOW_MS } from '../../src/account/method-health.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import { freshPhone, journeyFixture, sessionIds, start, switchMethod } from '../journeys/journey-host.js';
import { from, healthHost, HOUR, probeUser, reverseCallHealth } from '../journeys/figure-learning.js';

const NETWORKS = 75;
const MINUTE = 60_000;

describe.each(PLATFORMS)('method health: an outage of users from few networks (%s)', (platform) => {
  const fx = journeyFixture();

  it('users of 75 /24s that counted all week have the reverse call demoted within the hour of its outage', async () => {
    const { host } = await healthHost(fx, platform);
    let serial = 0;
    /** A +7 915 mobile user of `auto` from one of the NETWORKS /24s: the reverse call completes unless `outage`. */
    const user = async (outage: boolean) => {
      serial += 1;
      const owner = `user-${serial}`;
      const ip = from(`198.18.${serial % NETWORKS}.${1 + Math.floor(serial / NETWORKS)}`);
      const phone = freshPhone();
      const res = await start(host, { phone_number: phone, method: 'auto', device: 'mobile' }, owner, ip);
      expect(res.status).toBe(201);
      if (res.body.method === 'reverse_flash_call' && !outage) {
        await fx.sb.advance(15_000);
        await fx.sb.call(sessionIds(fx.sb, phone)[0]!, phone);
      } else {
        if (res.body.method !== 'sms') {
          await fx.sb.advance(5_000);
          expect((await switchMethod(host, res.body.verification_id, 'sms', owner, ip)).status).toBe(201);
        }
        await fx.sb.advance(20_000);
        const code = String(fx.sb.getSession(sessionIds(fx.sb, phone).at(-1)!)!.code);
        const body = { verification_id: res.body.verification_id, code };
        const proved = await call(host.url, 'POST', '/verification/check', body, { 'x-user': owner, ...ip });
        expect(proved.body.status).toBe('verified');
      }
      await fx.sb.webhooksIdle();
    };
    const untilMinute = () => fx.sb.advance(MINUTE - (fx.sb.now() % MINUTE));
    // 75 minutes of normal use, two users a minute: every network counts its week's share of a cell.
    for (let i = 0; i < NETWORKS; i++) {
      for (let j = 0; j < 2; j++) await user(false);
      await untilMinute();
    }
    expect(reverseCallHealth(host)).toEqual(['healthy']);
    expect((await probeUser(fx, host)).method).toBe('reverse_flash_call');
    // The outage: two users a minute from the same networks, the reverse call never completed.
    const outage = fx.sb.now();
    const states: string[] = [];
    while (fx.sb.now() < outage + HOUR && reverseCallHealth(host)[0] !== 'demoted') {
      for (let i = 0; i < 2; i++) await user(true);
      await untilMinute();
      await probeUser(fx, host);
      states.push(reverseCallHealth(host)[0]!);
    }
    expect(new Set(states)).toEqual(new Set(['healthy', 'degraded', 'demoted']));
    // Degraded on a window of them, demoted on the next: within the hour.
    expect(fx.sb.now() - outage).toBeGreaterThan(HEALTH_WINDOW_MS);
    expect(fx.sb.now() - outage).toBeLessThan(HOUR);
    expect((await probeUser(fx, host)).method).not.toBe('reverse_flash_call');
  }, 300_000);
});

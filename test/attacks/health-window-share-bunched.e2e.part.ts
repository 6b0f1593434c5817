/**
 * Attack (d5230829: "a network adds one session to the health cells per 20-minute window … a window of 20
 * outcomes still takes 20 networks (the week-turn farm of 10 no longer even degrades it)"). The window's claim
 * (`stats-cell-net:{h:…}`, HEALTH_WINDOW_MS) is taken at a session's start, but the health counts a session's
 * outcome when it ends (a rescued step: when the later step verifies), and the window it is judged in runs from a
 * read at least HEALTH_WINDOW_MS old. So one network lands two outcomes in one window: a session started at T whose
 * SMS code is typed 4 minutes later (ends T+4 min), and one started at T+20 min (its claim free again) proved at
 * once. A farm proving its own +7 926 numbers (a reverse call switched at once to SMS, the code typed: the host
 * pays each SMS) from 10 /24s, one account a proof, makes 20 rescues in one window: the reverse call is degraded on
 * every quiet +7 prefix (+7 915's users offered the fallback at half its moment); the same again 20 minutes later
 * and it is demoted (+7 915's mobile users sent to SMS, 3 RUB, first instead of the reverse call, 0.25 RUB).
 * 40 numbers, 10 /24s, in an hour, on any day (a network's day share, 10, allows this twice a day per network).
 * On the parent (d5230829^, a week's share of 2) the same farm degrades it once (its first pair) and never demotes
 * it (checked: seen [degraded, healthy], the reverse call first after); demoting took the week's turn
 * (health-week-turn-farm) or 20 networks.
 *
 * Expected: a network lands at most one outcome in any window the health judges, so 10 networks' 40 proofs leave
 * +7 915's reverse call healthy and first. Medium (steering of every quiet +7 prefix's users, any hour, daily;
 * the attacker pays 40 numbers' SIMs and 10 /24s, the host 40 SMS plus its users' SMS instead of reverse calls).
 */
import { describe, expect, it } from '@jest/globals';
import { HEALTH_WINDOW_MS } from '../../src/account/method-health.js';
import { HEALTH_READ_MS } from '../../src/account/method-health.service.js';
import { PLATFORMS } from '../support/verification-app.js';
import { journeyFixture } from '../journeys/journey-host.js';
import {
  farmCheck,
  farmSwitch,
  from,
  otherOperatorPhones,
  healthHost,
  probeUser,
} from '../journeys/figure-learning.js';

const farmPhone = otherOperatorPhones(5);
const MINUTE = 60_000;
const NETWORKS = 10;

describe.each(PLATFORMS)(
  'method health: a farm bunching two outcomes a network in one window (%s)',
  (platform) => {
    const fx = journeyFixture();

    it('10 /24s, each a late-proved and a prompt proof 20 minutes apart, leave +7 915’s reverse call healthy and first', async () => {
      const { host, health } = await healthHost(fx, platform);
      let serial = 0;
      const observe = async () => ({ ...(await probeUser(fx, host)), health: health() });
      /** Each network starts a reverse call on one of its own numbers and switches to SMS; its code typed `afterMs` later. */
      const round = async (afterMs: number) => {
        const pending: { phone: string; owner: string; ip: Record<string, string>; id: unknown }[] = [];
        for (let net = 0; net < NETWORKS; net++) {
          const phone = farmPhone();
          const owner = `farm-${++serial}`;
          const ip = from(`203.0.${20 + net}.${1 + (serial % 5)}`);
          pending.push({ phone, owner, ip, id: await farmSwitch(host, phone, owner, ip) });
        }
        await fx.sb.advance(afterMs);
        for (const { phone, owner, ip, id } of pending) await farmCheck(fx, host, phone, owner, ip, id);
        await fx.sb.webhooksIdle();
      };

      await fx.sb.advance(MINUTE);
      await observe();
      await fx.sb.advance(HEALTH_WINDOW_MS + HEALTH_READ_MS);
      const before = await observe();
      expect(before).toMatchObject({ method: 'reverse_flash_call', health: ['healthy@country'] });

      const seen: string[] = [];
      let t0 = fx.sb.now();
      for (let pair = 0; pair < 2; pair++) {
        // Once the networks' last claims are over: a read, then sessions whose codes are typed 4 minutes on.
        await fx.sb.advance(t0 - fx.sb.now());
        await observe();
        await round(4 * MINUTE);
        // The window since their starts is over: each network's claim is free, its next proof counts, at once.
        await fx.sb.advance(t0 + HEALTH_WINDOW_MS + 1_000 - fx.sb.now());
        t0 = fx.sb.now() + HEALTH_WINDOW_MS + 1_000;
        await round(5_000);
        await fx.sb.advance(HEALTH_READ_MS);
        seen.push((await observe()).health[0]!);
      }
      const after = await observe();
      expect({ seen, after: { method: after.method, health: after.health } }).toEqual({
        seen: ['healthy@country', 'healthy@country'],
        after: { method: 'reverse_flash_call', health: ['healthy@country'] },
      });
    }, 300_000);
  },
);

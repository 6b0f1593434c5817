/**
 * Attack (lane attack-n, on attack 43's fix): the status route's upstream reads are metered per caller
 * (STATUS_READS_PER_CALLER: 6 refreshes per 3 s), the caller an anonymous visitor's address. Free
 * starts are bounded per address AND per network (`freeStartPerCaller`, 120 per 10 minutes: a /24 is one
 * holder of many addresses), but the read meter is not: one holder of 6 addresses in one /24 starts 24
 * reverse flash calls (4 an address, far within its network's free budget, free for the host) and polls
 * each at the method's poll interval. Each address stays within its own meter (2 reads a second), the 6
 * together make 12: past the account's API rate of 8 a second, and real users' starts meet the API's
 * 429. Attack 43's shape, from one /24 instead of one address.
 *
 * Expected: a network's reads are bounded as its free starts are (a meter per network beside the
 * caller's), so real users are served. Medium (availability: real users refused). Fails on main
 * (d9234d1c).
 */
import { describe, expect, it } from '@jest/globals';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  startFrom,
} from '../protection/protection-host.js';

describe.each(ONE_PLATFORM)("one network's status polls and the account's API rate (%s)", (platform) => {
  const fx = protectionFixture();

  it('6 addresses of one /24 polling their own free sessions cannot make real users meet the API rate limit', async () => {
    const apiKey = fx.sb.demoAccount.apiKey;
    await fx.sb.updateAccount(apiKey, { rateLimitPerSecond: 8 });
    try {
      fx.host = await protectedHost(fx.sb, platform);
      const host = fx.host;
      // One holder: 6 addresses of one /24.
      const attackers = Array.from({ length: 6 }, (_, a) => `203.0.113.${10 + a}`);
      // 24 reverse flash calls nobody places, 4 a second (under the API's rate): free for the host.
      const ids: { id: unknown; from: string }[] = [];
      for (let i = 0; i < 24; i++) {
        const from = attackers[i % attackers.length]!;
        const r = await startFrom(host, from, freshPhone(), 'reverse_flash_call');
        expect(r.status).toBe(201);
        ids.push({ id: r.body.verification_id, from });
        if (i % 4 === 3) await fx.sb.advance(1_000);
      }
      const users: number[] = [];
      for (let round = 0; round < 5; round++) {
        // Every poll interval (1.5 s for the reverse call), the attacker reads each of its sessions.
        await fx.sb.advance(1_500);
        await Promise.all(
          ids.map(({ id, from }) =>
            call(host.url, 'GET', `/verification/status/${String(id)}`, undefined, {
              'x-forwarded-for': from,
            }),
          ),
        );
        const real = await Promise.all(
          Array.from({ length: 2 }, () => startFrom(host, freshIp(), freshPhone())),
        );
        users.push(...real.map((r) => r.status));
      }
      // Real users are served (or graded), never refused because one address used the account's rate.
      expect(users.filter((status) => status === 429)).toEqual([]);
    } finally {
      await fx.sb.updateAccount(apiKey, { rateLimitPerSecond: null });
    }
  });
});

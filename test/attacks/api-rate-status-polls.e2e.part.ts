/**
 * Attack 43: the account's API rate is everyone's, and free starts are metered per caller, but the
 * status reads those free starts buy are not. One address holds a few dozen reverse flash calls
 * (free unless proved, well within its free budget) and polls each at the method's poll interval:
 * every poll is an upstream GET, so one address fills the account's rate and real users' starts
 * meet the API's 429 (and then the shared back-off). Failed on the code it was written against; passes since its fix.
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

describe.each(ONE_PLATFORM)("one address's status polls and the account's API rate (%s)", (platform) => {
  const fx = protectionFixture();

  it('one address polling its own free sessions cannot make real users meet the API rate limit', async () => {
    const apiKey = fx.sb.demoAccount.apiKey;
    await fx.sb.updateAccount(apiKey, { rateLimitPerSecond: 8 });
    try {
      fx.host = await protectedHost(fx.sb, platform);
      const host = fx.host;
      const attacker = freshIp();
      // 24 reverse flash calls nobody places, 4 a second (under the API's rate): free for the host.
      const ids: unknown[] = [];
      for (let i = 0; i < 24; i++) {
        const r = await startFrom(host, attacker, freshPhone(), 'reverse_flash_call');
        expect(r.status).toBe(201);
        ids.push(r.body.verification_id);
        if (i % 4 === 3) await fx.sb.advance(1_000);
      }
      const users: number[] = [];
      for (let round = 0; round < 5; round++) {
        // Every poll interval (1.5 s for the reverse call), the attacker reads each of its sessions.
        await fx.sb.advance(1_500);
        await Promise.all(
          ids.map((id) =>
            call(host.url, 'GET', `/verification/status/${String(id)}`, undefined, {
              'x-forwarded-for': attacker,
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

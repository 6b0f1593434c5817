/**
 * Attack (lane attack-o, on 46a5e517's STATUS_REFRESHES_PER_NETWORK): the network meter is taken in the
 * same round as the caller's, whether or not the caller's own meter refuses; and a refused refresh
 * drops the session's poll claim, so the caller's next read of it asks the meters again. ONE address
 * with 8 free reverse-call sessions polled 6 times per interval stays within its own meter (6
 * refreshes per 3 s granted) yet spends its /24's 12 on refused reads, every window. A neighbour in
 * the /24 (another address, another user) who placed the call is answered as stored forever: with no
 * webhook (or one lost) its page stays "pending" while the session is verified.
 *
 * Expected: refused reads (the caller's meter spent) do not spend the network's refreshes, so one
 * address cannot starve its neighbours (it takes the many addresses the rule is about). Medium
 * (availability: a neighbour's page stalls). Fails on main (3e6185b8).
 */
import { describe, expect, it } from '@jest/globals';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import { freshPhone, protectedHost, protectionFixture, startFrom } from '../protection/protection-host.js';

describe.each(ONE_PLATFORM)("one address and its /24's status refreshes (%s)", (platform) => {
  const fx = protectionFixture();

  it("one address polling its own 8 sessions cannot keep a neighbour's verified session pending", async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const host = fx.host;
    const attacker = '203.0.113.10';
    const neighbour = '203.0.113.77';
    const ids: unknown[] = [];
    for (let i = 0; i < 8; i++) {
      const r = await startFrom(host, attacker, freshPhone(), 'reverse_flash_call');
      expect(r.status).toBe(201);
      ids.push(r.body.verification_id);
    }
    const phone = freshPhone();
    const mine = await startFrom(host, neighbour, phone, 'reverse_flash_call');
    expect(mine.status).toBe(201);
    // The neighbour places the call: the session is verified upstream.
    await fx.sb.call(fx.sb.sessionsFor(phone).at(-1)!.request_id, phone);
    const seen: unknown[] = [];
    for (let round = 0; round < 8; round++) {
      await fx.sb.advance(1_500);
      // The attacker reads each of its sessions 6 times an interval (48 requests from one address).
      for (let k = 0; k < 6; k++)
        for (const id of ids)
          await call(host.url, 'GET', `/verification/status/${String(id)}`, undefined, {
            'x-forwarded-for': attacker,
          });
      const read = await call(
        host.url,
        'GET',
        `/verification/status/${String(mine.body.verification_id)}`,
        undefined,
        {
          'x-forwarded-for': neighbour,
        },
      );
      seen.push(read.body.status);
    }
    // Within 12 s (8 polls) the neighbour's page learns its session is verified.
    expect(seen).toContain('verified');
  });
});

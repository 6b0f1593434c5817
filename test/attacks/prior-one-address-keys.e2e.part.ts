/**
 * Attack 43, a second configuration shape (failed on the code under attack; passes since its fix): a host that
 * keys clients itself (`limits.key`, here its signed-in account id) makes the key the caller whose
 * week share (5 starts) bounds what it adds to ranges, prefixes and countries; the address the
 * requests come from is never bounded. One address with six free accounts of the host starts 5 SMS
 * per account to numbers nobody completes: its country is "under attack" and strangers elsewhere in
 * it are graded away from the SMS they asked for. "One address changes nothing for others" does not
 * hold once the host keys clients otherwise.
 */
import { describe, expect, it } from '@jest/globals';
import { ONE_PLATFORM } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  startFrom,
} from '../protection/protection-host.js';

describe.each(ONE_PLATFORM)('one address, many host keys (%s)', (platform) => {
  const fx = protectionFixture();

  it('one address with six accounts of the host, five unconverted SMS each, changes nothing for a stranger in its country', async () => {
    fx.host = await protectedHost(fx.sb, platform, {
      key: (req) => {
        const account = (req as { headers: Record<string, unknown> }).headers['x-account'];
        return typeof account === 'string' ? `account:${account}` : undefined;
      },
    });
    const host = fx.host;
    const ip = freshIp();
    for (let a = 0; a < 6; a++) {
      for (let i = 0; i < 5; i++) {
        await startFrom(host, ip, freshPhone(), 'sms', { 'x-account': `sock-${a}` });
        await fx.sb.advance(20_000);
      }
    }
    await fx.sb.advance(15 * 60_000);
    const strangers = [];
    for (let i = 0; i < 5; i++) {
      // Elsewhere in the country: another network (behind the attacker's own /24, a start past that
      // network's share is graded while the country does not cover it: docs/protection.md).
      const r = await startFrom(host, `203.0.${100 + i}.7`, freshPhone('+7985'), 'sms', {
        'x-account': `user-${i}`,
      });
      strangers.push([r.status, r.body.method ?? r.body.held ?? r.body.error_code]);
    }
    expect(strangers).toEqual(strangers.map(() => [201, 'sms']));
  });
});

/**
 * Attack 43 (failed on the code under attack; passes since its fix): one network flags its country. A caller
 * adds at most 5 starts a week to ranges, prefixes and countries, but the caller is the client key
 * (the address) when there is one: the network (/24) that holds many addresses adds 5 per address.
 * Six addresses of one /24 start 5 SMS each to numbers nobody completes (30 starts, an hour's
 * per-address limit each, unchanged from what one address may do): the whole country is "under
 * attack" and strangers in untouched prefixes are graded away from the SMS they asked for.
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

describe.each(ONE_PLATFORM)('one network and its country (%s)', (platform) => {
  const fx = protectionFixture();

  it.each([
    ['six addresses of one /24', (a: number) => `192.0.2.${10 + a}`],
    ['six /64s of one IPv6 /48', (a: number) => `2001:db8:77:${a + 1}::5`],
  ])(
    '%s, five unconverted SMS each, do not change what a stranger elsewhere in the country is offered',
    async (_shape, address) => {
      fx.host = await protectedHost(fx.sb, platform);
      const host = fx.host;
      for (let a = 0; a < 6; a++) {
        const ip = address(a);
        for (let i = 0; i < 5; i++) {
          await startFrom(host, ip, freshPhone());
          await fx.sb.advance(20_000);
        }
      }
      // Past the minutes a crowd may still be typing in.
      await fx.sb.advance(15 * 60_000);
      const strangers = [];
      for (let i = 0; i < 5; i++) {
        const r = await startFrom(host, freshIp(), freshPhone('+7985'));
        strangers.push([r.status, r.body.method ?? r.body.held ?? r.body.error_code]);
      }
      expect(strangers).toEqual(strangers.map(() => [201, 'sms']));
      const flagged = host.opsEvents.filter(
        (e) =>
          e.name === 'verification.fraud_suspected' &&
          (e.payload as { countryUnderAttack?: boolean }).countryUnderAttack,
      );
      expect(flagged).toEqual([]);
    },
  );
});

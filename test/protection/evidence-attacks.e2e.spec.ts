/**
 * Issue 43: evidence weighed by what it proves and who gives it, written as the attacker plays it:
 * the range's numbers are the attacker's, a fresh address for every start, no captcha, the default
 * options. Over real HTTP against the sandbox, on the sandbox's clock. The figures are what the
 * attacker gets out, not the rules' thresholds.
 */
import { describe, expect, it } from '@jest/globals';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import { freshIp, protectedHost, protectionFixture, startFrom } from './protection-host.js';

let rangeSerial = 0;
/** A fresh range of mobile numbers (+7 958 NNN) and its numbers. */
function freshRange(): (i: number) => string {
  rangeSerial += 1;
  const range = `+7958${String((process.pid * 13 + rangeSerial * 43) % 1000).padStart(3, '0')}`;
  return (i) => `${range}${String(i).padStart(4, '0')}`;
}

describe.each(ONE_PLATFORM)('evidence and who gives it (%s)', (platform) => {
  const fx = protectionFixture();
  it('conversion laundering: a reverse flash call proved in a held range does not release SMS into it', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const number = freshRange();
    const before = fx.sb.requestCount('POST /v1/verify');
    let sms = 0;
    let n = 0;
    // Ten rounds: SMS into the range until it is graded, then one of its numbers proved by a reverse
    // flash call (0.25 RUB to the host, nothing to the attacker), then SMS again.
    for (let round = 0; round < 10; round++) {
      // SMS until the first graded answer (a pumper does not waste attempts on a held range).
      for (let tries = 0; tries < 8; tries++) {
        const r = await startFrom(fx.host, freshIp(), number(n++));
        if (r.status !== 201) break;
        sms += 1;
      }
      const ip = freshIp();
      const phone = number(n++);
      const proof = await startFrom(fx.host, ip, phone, 'reverse_flash_call');
      expect(proof.status).toBe(201);
      await fx.sb.call(fx.sb.sessionsFor(phone)[0]!.request_id, phone);
      await fx.sb.advance(5_000);
      const seen = await call(
        fx.host.url,
        'GET',
        `/verification/status/${String(proof.body.verification_id)}`,
        undefined,
        { 'x-forwarded-for': ip },
      );
      expect(seen.body.status).toBe('verified');
      await fx.sb.advance(60_000);
    }
    // Every proof was served (the reverse flash call is what a held range is offered).
    expect(fx.sb.requestCount('POST /v1/verify') - before).toBe(sms + 10);
    // The burst signature lets a few through before the range is held; the proofs release none.
    expect(sms).toBeLessThanOrEqual(5);
  });
});

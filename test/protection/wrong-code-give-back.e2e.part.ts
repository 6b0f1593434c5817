/**
 * A check that failed for another reason than a wrong code gives its point of the wrong-code budget back
 * before it answers: on a store whose writes take their time, the caller's next check right after the
 * answer still finds the point.
 */
import { describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { slowWritesStore } from '../support/round-trip-store.js';
import { ONE_PLATFORM } from '../support/verification-app.js';
import {
  check,
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  startFrom,
} from './protection-host.js';

const HOUR = 3_600_000;
const CHECKS = 'POST /v1/verify/check';

function wrongCodeOf(sb: VerificationSandbox, phone: string): string {
  const right = String(sb.sessionsFor(phone)[0].code);
  return right.replace(/^./, (d) => String((Number(d) + 1) % 10));
}

describe.each(ONE_PLATFORM)('wrong-code points given back (%s)', (platform) => {
  const fx = protectionFixture();

  it('a check the API failed answers once its point is given back: on a slow store, the next wrong code right after it is still invalid_code, and the one after it too_many_wrong_codes', async () => {
    // The store's give-backs of wrong-code points are slow.
    const slow = slowWritesStore(
      () => fx.sb.now(),
      (method, [key, by]) => method === 'increment' && String(key).includes('wrong-codes') && Number(by) < 0,
    );
    try {
      fx.host = await protectedHost(
        fx.sb,
        platform,
        { resendCooldownMs: false, wrongCodesPerPhone: { points: 1, windowMs: HOUR } },
        // The host keeps a history: the failed check's refusal is written as it answers (a write that
        // overtakes a give-back the check did not wait for).
        { store: slow.store, history: {} },
      );
      const phone = freshPhone();
      const ip = freshIp();
      const started = await startFrom(fx.host, ip, phone);
      expect(started.status).toBe(201);
      const wrong = wrongCodeOf(fx.sb, phone);

      fx.sb.addFault({ route: CHECKS, kind: 'status', status: 500, count: 0 });
      const failed = await check(fx.host, ip, started.body.verification_id, wrong);
      expect(failed.status).toBe(503);
      expect(failed.body.error_code).toBe('service_unavailable');
      expect(slow.held()).toBe(1);
      fx.sb.clearFaults();

      const checks = fx.sb.requestCount(CHECKS);
      const next = await check(fx.host, ip, started.body.verification_id, wrong);
      slow.land();
      expect(next.body.error_code).toBe('invalid_code');
      const over = await check(fx.host, ip, started.body.verification_id, wrong);
      expect(over.status).toBe(429);
      expect(over.body.error_code).toBe('too_many_wrong_codes');
      expect(fx.sb.requestCount(CHECKS) - checks).toBe(1);
    } finally {
      slow.land();
      await fx.host?.close();
      fx.host = undefined;
      await slow.inner.close();
    }
  });
});

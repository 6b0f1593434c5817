/**
 * The API's 429 back-off at its bound, on the sandbox's clock: one tick before its `Retry-After` ends a
 * start is still refused locally (nothing sent), at its end it goes through; free starts alike.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ONE_PLATFORM } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { freshIp, freshPhone, protectedHost, startFrom } from './protection-host.js';

describe.each(ONE_PLATFORM)('the upstream back-off at its bound (%s)', (platform) => {
  // Registered before the suite's hooks: the sandbox's faults are cleared before the test's host closes.
  afterEach(() => {
    fx.sb.clearFaults();
  });
  // A frozen clock: only `advance` moves it, so the bound is exact.
  const fx = sandboxSuite({ demoAccount: { balance: 100_000 } });

  it.each(['sms', 'reverse_flash_call'])(
    '%s: refused until the last tick, sent at the end',
    async (method) => {
      fx.host = await protectedHost(fx.sb, platform);
      fx.sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 429, retry_after_s: 30, count: 1 });
      expect((await startFrom(fx.host, freshIp(), freshPhone(), method)).status).toBe(429);
      const sent = fx.sb.requestCount('POST /v1/verify');
      await fx.sb.advance(29_999);
      const waiting = await startFrom(fx.host, freshIp(), freshPhone(), method);
      expect({ status: waiting.status, retryAfter: waiting.headers.get('retry-after') }).toEqual({
        status: 429,
        retryAfter: '1',
      });
      expect(fx.sb.requestCount('POST /v1/verify')).toBe(sent);
      await fx.sb.advance(1);
      expect((await startFrom(fx.host, freshIp(), freshPhone(), method)).status).toBe(201);
      expect(fx.sb.requestCount('POST /v1/verify')).toBe(sent + 1);
    },
  );
});

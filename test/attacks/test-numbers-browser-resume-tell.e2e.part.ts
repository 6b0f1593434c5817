/**
 * Attack (lane attack-i, telling the reviewer's number from a real one): docs/test-numbers.md, "Limits
 * of the design", says a second start within the cooldown tells a test number apart only for a
 * signed-in stranger ("a signed-in caller's second start of a real number within the cooldown is handed
 * its pending session back (coalescing); a test number's is refused"), and a host that verifies before
 * sign-in (no owners, so `testNumbers.owners` cannot be used) reads that as safe. But the module hands
 * every anonymous browser a `pv_browser` cookie by default, and coalesces by it: a stranger with a
 * cookie jar (curl -c/-b) starts a candidate number twice. A real number's second start is its pending
 * session handed back (201, the same session's handle); a test number's is 429 `resend_cooldown`. One
 * free request pair per candidate (a real one costs the host one SMS) names the reviewer's number, the
 * first step of every attack on it.
 *
 * Expected: the same answer for both (a test number's second start handed its pending session back, or
 * the documented limit saying any browser tells them apart). Low (information that targets the
 * reviewer's number). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const TEST_NUMBER = '+79990004601';

describe.each(PLATFORMS)('an anonymous browser tells the test number apart (%s)', (platform: Platform) => {
  const suite = sandboxSuite();

  it('by its second start within the cooldown, with the cookie the module set', async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    const base = moduleOptions(suite.sb, {
      limits: {},
      owner: undefined,
      testNumbers: { numbers: [{ phoneNumber: TEST_NUMBER, code: '246810' }] },
    });
    suite.host = await createTestApp({
      platform,
      trustProxy: true,
      module: {
        ...base,
        api: { ...base.api, apiKey: account.apiKey, apiSecret: account.apiSecret },
        webhooks: { secret: account.webhookSecret },
      },
    });
    const twice = async (phone: string, ip: string) => {
      const post = (headers: Record<string, string>) =>
        call(
          suite.host!.url,
          'POST',
          '/verification/start',
          { phone_number: phone, method: 'sms' },
          { 'x-forwarded-for': ip, ...headers },
        );
      const first = await post({});
      expect(first.status).toBe(201);
      // The cookie jar: what the module set on the first answer.
      const cookie = /pv_browser=([^;,\s]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1];
      expect(cookie).toBeDefined();
      const second = await post({ cookie: `pv_browser=${cookie}` });
      return { status: second.status, reason: second.body.reason ?? null };
    };

    const real = await twice(platform === 'express' ? '+79161234601' : '+79161234602', '74.6.1.7');
    const test = await twice(TEST_NUMBER, '74.7.1.7');
    expect(test).toEqual(real);
  });
});

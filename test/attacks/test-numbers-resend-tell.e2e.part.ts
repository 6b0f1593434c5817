/**
 * Attack (lane attack-44e, a test number recognisable from its start): issue 44 asks that a stranger
 * cannot tell which number is the reviewer's (a test session shaped as a real one). The start answer of
 * a real number names when a resend is allowed (`resend_available_at`, the cooldown's end, a minute on);
 * a test number's says `null`, on sms and on reverse_flash_call alike. One anonymous start of each
 * candidate number (free, never sent, within every limit) tells the stranger which one is the test
 * number, the first step of every attack on the reviewer (its spare slots, its wrong-code ceilings).
 * The same caller starting the number again shows it too, and shows why: a real number's second start
 * within the cooldown is 429 `rate_limit_exceeded` (`reason: "resend_cooldown"`), a test number's is a
 * new 201 session, so the resend cooldown, an ordinary per-client limit, never applies to test numbers.
 *
 * Expected: a test session's start answer carries the same fields and offsets a real one's does
 * (`resend_available_at` the cooldown's end) and takes the resend cooldown as a real one does. Low (information that targets the reviewer's number).
 * Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { reviewerHosts } from '../test-numbers/reviewer-host.js';

const TEST_NUMBER = '+79990004471';

describe.each(PLATFORMS)('a stranger tells the test number from a real one (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  const reviewerHost = reviewerHosts(suite);
  const boot = () => reviewerHost(platform, TEST_NUMBER, 'memory', { owner: undefined });

  const post = (phone: string, method: string, ip: string) =>
    call(
      suite.host!.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method },
      { 'x-forwarded-for': ip },
    );

  it.each(['sms', 'reverse_flash_call'])('by its %s start answer', async (method) => {
    await boot();
    const start = async (phone: string, ip: string) => {
      const started = await call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method },
        { 'x-forwarded-for': ip },
      );
      expect(started.status).toBe(201);
      const { resend_available_at: resend, expires_at: expires } = started.body as Record<string, unknown>;
      return { resendIn: resend === null ? null : Date.parse(String(resend)) - Date.parse(String(expires)) };
    };

    const real = await start('+79161234581', '74.2.1.7');
    const test = await start(TEST_NUMBER, '74.3.1.7');
    expect(real.resendIn).not.toBeNull();
    expect(test).toEqual(real);
  });

  it('by a second start of the same caller within the cooldown', async () => {
    await boot();
    const again = async (phone: string, ip: string) => {
      expect((await post(phone, 'sms', ip)).status).toBe(201);
      const second = await post(phone, 'sms', ip);
      return { status: second.status, reason: second.body.reason };
    };
    const real = await again('+79161234582', '74.4.1.7');
    expect(real).toEqual({ status: 429, reason: 'resend_cooldown' });
    expect(await again(TEST_NUMBER, '74.5.1.7')).toEqual(real);
  });
});

/**
 * Attack (lane attack-history): a ring's order counter (`seq`) is a fixed-window counter of the store
 * (`increment`: the TTL is set when the counter is made and never extended), made with the ring's first
 * entry and kept `retentionDays`. It restarts at 1 while the entries written after the first still live,
 * and hands out a seq a live entry holds; `list` kept one entry per seq (it takes a verified start's copy
 * and its original for one), so one of the two was not listed.
 * What support saw: a number's history without the refusal just made (or without a start a day and a half
 * old), though the number has three entries.
 * Medium. Failed on the code it was written against; passes since its fix (an entry is its seq and its time).
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const DAY = 86_400_000;

// History is written below the routes: one platform is enough.
describe("history's order counter restarts while its entries live (attack)", () => {
  const suite = sandboxSuite();
  let serial = 0;
  const phoneNumber = () =>
    `+791678${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(3, '0')}`;
  let refusing = false;

  async function boot(): Promise<VerificationHistory> {
    suite.host = await createTestApp({
      platform: 'express',
      module: moduleOptions(suite.sb, {
        history: { retentionDays: 2 },
        limits: {
          beforeStart: () => !refusing || { allow: false, reason: 'captcha' },
          resendCooldownMs: false,
          pumping: false,
          spendCap: false,
        },
      }),
    });
    return suite.host.app.get(VerificationHistory);
  }
  const start = async (phone: string, method: string, status = 201) =>
    expect(
      (
        await call(
          suite.host!.url,
          'POST',
          '/verification/start',
          { phone_number: phone, method },
          { 'x-user': 'gina' },
        )
      ).status,
    ).toBe(status);

  it('a start a day and a half old is still listed beside a start and a refusal made after the first start ended', async () => {
    refusing = false;
    const history = await boot();
    const phone = phoneNumber();
    const first = suite.sb.now();
    await start(phone, 'sms');
    await suite.sb.advance(1.5 * DAY);
    await start(phone, 'flash_call');
    await suite.sb.advance(first + 2 * DAY - suite.sb.now());
    await start(phone, 'msgr1_otp');
    refusing = true;
    await start(phone, 'sms', 403);
    expect((await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.method])).toEqual([
      ['start', 'flash_call'],
      ['start', 'msgr1_otp'],
      ['refusal', 'sms'],
    ]);
  });
});

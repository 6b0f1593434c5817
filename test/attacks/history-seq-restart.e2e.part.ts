/**
 * A ring's counters (its order `seq`, each shelf's slot counter) live as long as the last entry they
 * numbered (each increment renews them). Were they fixed windows made with the ring's first entry, they
 * would restart while later entries live: a new entry would get a live entry's seq (and `list`, which keeps
 * a verified start's copy and its original as one, would drop one of the two), and a shelf's next entries
 * would take slots 0 and 1 over an entry younger than its retention though 98 slots are empty. What support
 * would see: a number's history without the refusal just made, or without a start a day and a half old.
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const DAY = 86_400_000;

// History is written below the routes: one platform is enough.
describe("history's counters while its entries live", () => {
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

  it('a start a day and a half old is still listed after two more starts, once the first start has ended', async () => {
    refusing = false;
    const history = await boot();
    const phone = phoneNumber();
    const first = suite.sb.now();
    await start(phone, 'sms');
    await suite.sb.advance(1.5 * DAY);
    await start(phone, 'flash_call');
    // The first start's end (retentionDays 2): it goes, the second stays for another day and a half.
    await suite.sb.advance(first + 2 * DAY - suite.sb.now());
    expect((await history.list({ phoneNumber: phone })).map((e) => e.method)).toEqual(['flash_call']);
    await start(phone, 'msgr1_otp');
    await start(phone, 'sms');
    expect((await history.list({ phoneNumber: phone })).map((e) => e.method)).toEqual([
      'flash_call',
      'msgr1_otp',
      'sms',
    ]);
  });
});

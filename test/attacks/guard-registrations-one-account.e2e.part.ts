/**
 * Attack (lane attack-44): claims are bound to their registration (name and API key), but a
 * `verification_id` is sealed with a key derived from `handleKey` alone. Two named registrations on
 * ONE API account (one account, two policies: `signup` for any method, `payout` for the host's
 * stricter one) with one `handleKey` (one environment variable): a verification made through
 * signup's routes, presented to a route guarded by payout's registration, opens there. Payout's
 * store has no record of it, so payout rebuilds it from the API (the same account knows it) and its
 * guard lets the request through; payout's client routes answer for it too. Exactly the cross-
 * registration shape issue 44 closed for claims, through the other door of the guard.
 *
 * Expected: one registration's verification_id reads as unknown to another (403 `reason: "unknown"`
 * on the guard, 404 on the client routes), whatever the accounts.
 *
 * Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { Controller, Module, Post } from '@nestjs/common';
import { RequireVerifiedPhone, VerifiedPhone } from '../../src/guard/verified-phone.decorators.js';
import type { VerifiedPhoneDetails } from '../../src/guard/verified-phone.request.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const HANDLE_KEY = 'one-handle-key-for-both-registrations-0123456789';

@Controller('payout-account')
class PayoutAccount {
  @Post('phone')
  @RequireVerifiedPhone()
  phone(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
    return { phone: details.phoneNumber, source: details.source };
  }
}
@Module({ imports: [VerificationModule.forFeature('payout')], controllers: [PayoutAccount] })
class PayoutFeature {}

describe.each(PLATFORMS)('two registrations on one API account, one handleKey (%s)', (platform: Platform) => {
  const suite = sandboxSuite();

  it("signup's verification_id neither opens payout's guard nor payout's client routes", async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    const registration = (name: string, extra: Partial<VerificationModuleOptions> = {}) => {
      return {
        ...moduleOptions(suite.sb, {}, account),
        name,
        handleKey: HANDLE_KEY,
        routes: { prefix: `${name}/verification` },
        webhooks: { secret: account.webhookSecret, path: `${name}/webhooks` },
        ...extra,
      } as VerificationModuleOptions;
    };
    suite.host = await createTestApp({
      platform,
      module: VerificationModule.forRoot(registration('signup')),
      imports: [
        VerificationModule.forRoot(registration('payout', { methods: ['operator_id'] })),
        PayoutFeature,
      ],
    });
    const user = { 'x-user': 'dana' };
    const phone = platform === 'express' ? '+79163330171' : '+79163330172';
    const started = await call(
      suite.host.url,
      'POST',
      '/signup/verification/start',
      { phone_number: phone, method: 'sms' },
      user,
    );
    expect(started.status).toBe(201);
    const id = String(started.body.verification_id);
    const [session] = suite.sb.sessionsFor(phone);
    await suite.sb.deliver(session!.request_id);
    const code = String(suite.sb.getSession(session!.request_id)!.code);
    const checked = await call(
      suite.host.url,
      'POST',
      '/signup/verification/check',
      { verification_id: id, code },
      user,
    );
    expect(checked.body.verified).toBe(true);

    const guarded = await call(
      suite.host.url,
      'POST',
      '/payout-account/phone',
      {},
      { ...user, 'x-verification-id': id },
    );
    const status = await call(suite.host.url, 'GET', `/payout/verification/status/${id}`, undefined, user);
    expect({ guard: guarded.body, status: status.status }).toMatchObject({
      guard: { status: 403, error_code: 'phone_verification_required', reason: 'unknown' },
      status: 404,
    });
  });
});

/**
 * The guard with named registrations: a claim is bound to the registration that issued it (one
 * `handleKey` for two registrations, as one environment variable gives, opens neither's guard with
 * the other's claim), and a guarded route in a module that sees no registration fails the boot with
 * the module's own error naming `forFeature(name)` and `isGlobal`.
 */
import { describe, expect, it } from '@jest/globals';
import { Controller, Module, Post } from '@nestjs/common';
import { PhoneVerificationError } from '../../src/core/phone-verification.error.js';
import { RequireVerifiedPhone, VerifiedPhone } from '../../src/guard/verified-phone.decorators.js';
import type { VerifiedPhoneDetails } from '../../src/guard/verified-phone.request.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const HANDLE_KEY = 'one-handle-key-for-both-registrations-0123456789';

function guardedController(path: string) {
  @Controller(path)
  class Guarded {
    @Post('phone')
    @RequireVerifiedPhone()
    phone(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
      return { phone: details.phoneNumber, claim: details.claim, source: details.source };
    }
  }
  return Guarded;
}

const NorthAccount = guardedController('north-account');
const SouthAccount = guardedController('south-account');
@Module({ imports: [VerificationModule.forFeature('north')], controllers: [NorthAccount] })
class NorthFeature {}
@Module({ imports: [VerificationModule.forFeature('south')], controllers: [SouthAccount] })
class SouthFeature {}
/** A guarded route in a module that imports no registration. */
@Module({ controllers: [guardedController('nowhere')] })
class UnboundFeature {}

let serial = 0;
const phoneNumber = () =>
  `+7916333${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;

describe.each(PLATFORMS)('the guard and named registrations (%s)', (platform: Platform) => {
  const suite = sandboxSuite();

  async function registration(name: string): Promise<VerificationModuleOptions> {
    const account = await suite.sb.createAccount({ balance: 100 });
    return {
      ...moduleOptions(suite.sb, {}, account),
      name,
      handleKey: HANDLE_KEY,
      routes: { prefix: `${name}/verification` },
    };
  }

  it("one handleKey for two registrations: a claim of one does not open the other's guard", async () => {
    suite.host = await createTestApp({
      platform,
      module: VerificationModule.forRoot(await registration('north')),
      imports: [VerificationModule.forRoot(await registration('south')), NorthFeature, SouthFeature],
    });
    const user = { 'x-user': 'dana' };
    const phone = phoneNumber();
    const started = await call(
      suite.host.url,
      'POST',
      '/north/verification/start',
      { phone_number: phone, method: 'sms' },
      user,
    );
    const id = String(started.body.verification_id);
    const [session] = suite.sb.sessionsFor(phone);
    await suite.sb.deliver(session!.request_id);
    const code = String(suite.sb.getSession(session!.request_id)!.code);
    await call(suite.host.url, 'POST', '/north/verification/check', { verification_id: id, code }, user);

    const north = await call(
      suite.host.url,
      'POST',
      '/north-account/phone',
      {},
      { ...user, 'x-verification-id': id },
    );
    expect(north.status).toBe(201);
    const claim = { ...user, 'x-verified-phone-claim': String(north.body.claim) };
    // The claim opens the registration that issued it …
    expect((await call(suite.host.url, 'POST', '/north-account/phone', {}, claim)).body).toMatchObject({
      phone,
      source: 'claim',
    });
    // … and not the other, though both derive their keys from one handleKey.
    expect((await call(suite.host.url, 'POST', '/south-account/phone', {}, claim)).body).toMatchObject({
      status: 403,
      error_code: 'phone_verification_required',
      reason: 'invalid_claim',
    });
    // Nor does north's verification_id (sealed with the same key) open south's guard.
    expect(
      (await call(suite.host.url, 'POST', '/south-account/phone', {}, { ...user, 'x-verification-id': id }))
        .body,
    ).toMatchObject({ status: 403, reason: 'unknown' });
  });

  it('a guarded route in a module that sees no registration fails the boot naming forFeature and isGlobal', async () => {
    const booting = createTestApp({
      platform,
      module: VerificationModule.forRoot(await registration('north')),
      imports: [UnboundFeature],
    });
    await expect(booting).rejects.toThrow(/VerificationModule\.forFeature\(name\).*isGlobal: true/);
    await expect(booting).rejects.toBeInstanceOf(PhoneVerificationError);
  });
});

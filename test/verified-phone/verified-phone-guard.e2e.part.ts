/**
 * VerifiedPhoneGuard and @VerifiedPhone() on a host's own routes, in a host with its own auth guard
 * (a global APP_GUARD that sets req.user; the module's owner is req.user.id): 403/409 problems the
 * host's filters render, only a verification of this owner that the API says is verified, and the
 * signed claim for step-up checks.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import {
  Body,
  Controller,
  Injectable,
  Post,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { RequireVerifiedPhone, VerifiedPhone } from '../../src/guard/verified-phone.decorators.js';
import { VerifiedPhoneGuard } from '../../src/guard/verified-phone.guard.js';
import type { VerifiedPhoneDetails } from '../../src/guard/verified-phone.request.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { startAccountHost } from '../webhooks/harness.js';
import { call, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';

/** The host's own authentication: `authorization: Bearer <user>` or 401, for every route. */
@Injectable()
class HostAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string>; user?: { id: string } }>();
    const match = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '');
    if (!match) throw new UnauthorizedException();
    request.user = { id: match[1]! };
    return true;
  }
}

@Controller('account')
class AccountController {
  @Post('phone')
  @RequireVerifiedPhone()
  changeNumber(
    @VerifiedPhone() phone: string,
    @VerifiedPhone('details') details: VerifiedPhoneDetails,
    @Body() body: Record<string, unknown>,
  ) {
    return {
      phone,
      source: details.source,
      owner: details.owner,
      claim: details.claim,
      nickname: body.nickname,
    };
  }

  /** A mistake: reads the number without the guard. */
  @Post('unguarded')
  unguarded(@VerifiedPhone() phone: string | undefined) {
    return { phone: phone ?? null };
  }

  @Post('payout')
  @RequireVerifiedPhone({ within: 600_000 })
  payout(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
    return {
      phone: details.phoneNumber,
      source: details.source,
      verified_at: details.verifiedAt.toISOString(),
    };
  }
}

/**
 * A host's subclass for another context (as for GraphQL, `getRequest` overridden): here an older app that
 * sends the verification as `x-legacy-verification`, handed to the guard under the module's header name.
 */
@Injectable()
class LegacyHeaderGuard extends VerifiedPhoneGuard {
  protected override getRequest(context: ExecutionContext): unknown {
    const request = super.getRequest(context) as { headers: Record<string, string | undefined> };
    request.headers['x-verification-id'] ??= request.headers['x-legacy-verification'];
    return request;
  }
}

@Controller('legacy')
class LegacyController {
  @Post('phone')
  @RequireVerifiedPhone({ guard: LegacyHeaderGuard })
  changeNumber(@VerifiedPhone() phone: string) {
    return { phone };
  }
}

describe.each(PLATFORMS)('verified-phone guard on host routes (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let serial = 0;

  async function boot(overrides: Partial<VerificationModuleOptions> = {}): Promise<TestApp> {
    suite.host = await startAccountHost(platform, suite.sb, {
      module: { owner: (req) => (req as { user?: { id: string } }).user?.id, ...overrides },
      controllers: [AccountController, LegacyController],
      providers: [{ provide: APP_GUARD, useClass: HostAuthGuard }],
    });
    return suite.host;
  }

  const as = (user: string, extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${user}`,
    ...extra,
  });
  const phoneNumber = () =>
    `+7916555${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(2, '0')}`;

  /** Starts an SMS verification for `user` over the client routes; `verify` also delivers and checks the code. */
  async function verification(user: string, verify: boolean): Promise<{ id: string; phone: string }> {
    const phone = phoneNumber();
    const started = await call(
      suite.host!.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method: 'sms' },
      as(user),
    );
    expect(started.status).toBe(201);
    const id = String(started.body.verification_id);
    if (verify) {
      const [session] = suite.sb.sessionsFor(phone);
      await suite.sb.deliver(session!.request_id);
      const code = String(suite.sb.getSession(session!.request_id)!.code);
      const checked = await call(
        suite.host!.url,
        'POST',
        '/verification/check',
        { verification_id: id, code },
        as(user),
      );
      expect(checked.body.verified).toBe(true);
    }
    return { id, phone };
  }

  it('lets a route through only with a verification of this owner that is verified, and hands the handler the number', async () => {
    await boot();
    // The host's own guard runs first: no user, no route.
    expect((await call(suite.host!.url, 'POST', '/account/phone', {}, {})).status).toBe(401);

    const missing = await call(suite.host!.url, 'POST', '/account/phone', {}, as('alice'));
    expect(missing.status).toBe(403);
    expect(missing.body).toMatchObject({
      status: 403,
      error_code: 'phone_verification_required',
      reason: 'missing',
    });

    const pending = await verification('alice', false);
    const notYet = await call(
      suite.host!.url,
      'POST',
      '/account/phone',
      {},
      as('alice', { 'x-verification-id': pending.id }),
    );
    expect(notYet.status).toBe(409);
    expect(notYet.body).toMatchObject({
      status: 409,
      error_code: 'phone_not_verified',
      verification_status: 'sent',
    });

    const done = await verification('alice', true);
    const ok = await call(
      suite.host!.url,
      'POST',
      '/account/phone',
      { nickname: 'a' },
      as('alice', { 'x-verification-id': done.id }),
    );
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({
      phone: done.phone,
      source: 'verification',
      owner: 'alice',
      nickname: 'a',
    });
    expect(String(ok.body.claim)).toMatch(/^vpc1\./);

    // The id in the body field works the same.
    const inBody = await call(
      suite.host!.url,
      'POST',
      '/account/phone',
      { verification_id: done.id },
      as('alice'),
    );
    expect(inBody.body.phone).toBe(done.phone);

    // Another user presenting alice's verification, or a forged id: the same 403 as none at all.
    const foreign = await call(
      suite.host!.url,
      'POST',
      '/account/phone',
      {},
      as('mallory', { 'x-verification-id': done.id }),
    );
    expect(foreign.body).toMatchObject({
      status: 403,
      error_code: 'phone_verification_required',
      reason: 'unknown',
    });
    const forged = await call(
      suite.host!.url,
      'POST',
      '/account/phone',
      {},
      as('alice', { 'x-verification-id': `${done.id}x` }),
    );
    expect(forged.body).toMatchObject({ status: 403, error_code: 'phone_verification_required' });
    expect(JSON.stringify(foreign.body)).not.toContain(done.phone);

    // An expired verification: 409 saying so.
    const stale = await verification('alice', false);
    await suite.sb.advance(301_000);
    const expired = await call(
      suite.host!.url,
      'POST',
      '/account/phone',
      {},
      as('alice', { 'x-verification-id': stale.id }),
    );
    expect(expired.body).toMatchObject({
      status: 409,
      error_code: 'phone_not_verified',
      verification_status: 'expired',
    });
  });

  it("RequireVerifiedPhone's guard option applies the host's subclass: its own request reading, the same rules; no guard, no number", async () => {
    await boot();
    const done = await verification('alice', true);
    const legacy = (user: string, id: string) =>
      call(suite.host!.url, 'POST', '/legacy/phone', {}, as(user, { 'x-legacy-verification': id }));
    expect(await legacy('alice', done.id)).toMatchObject({ status: 201, body: { phone: done.phone } });
    // The subclass only changes where the id is read: another owner is refused as by the guard itself.
    expect((await legacy('mallory', done.id)).body).toMatchObject({ status: 403, reason: 'unknown' });
    // A route reading @VerifiedPhone() without the guard fails (500), never hands its handler no number.
    const unguarded = await call(
      suite.host!.url,
      'POST',
      '/account/unguarded',
      {},
      as('alice', { 'x-verification-id': done.id }),
    );
    expect(unguarded.status).toBe(500);
    expect(unguarded.body.phone).toBeUndefined();
    // The module's own route ignores the legacy header.
    const plain = await call(
      suite.host!.url,
      'POST',
      '/account/phone',
      {},
      as('alice', { 'x-legacy-verification': done.id }),
    );
    expect(plain.body).toMatchObject({ status: 403, reason: 'missing' });
  });

  it('header names given in any case: the claim header is read as the verification header is', async () => {
    // Both names are options; a host writes them as it writes headers elsewhere (capitalised).
    await boot({ verifiedPhone: { header: 'X-Phone-Verification', claimHeader: 'X-Step-Up-Claim' } });
    const done = await verification('carol', true);
    const first = await call(
      suite.host!.url,
      'POST',
      '/account/phone',
      {},
      as('carol', { 'X-Phone-Verification': done.id }),
    );
    expect(first.status).toBe(201);
    const readsBefore = suite.sb.requestCount('GET /v1/verify/:id');
    for (const name of ['X-Step-Up-Claim', 'x-step-up-claim']) {
      const stepUp = await call(
        suite.host!.url,
        'POST',
        '/account/payout',
        {},
        as('carol', { [name]: String(first.body.claim) }),
      );
      expect({ name, status: stepUp.status, body: stepUp.body }).toMatchObject({
        name,
        status: 201,
        body: { phone: done.phone, source: 'claim' },
      });
    }
    // The claim, not another read of the API, let the step-up through.
    expect(suite.sb.requestCount('GET /v1/verify/:id')).toBe(readsBefore);
    // The default name is not read once another is configured.
    const other = await call(
      suite.host!.url,
      'POST',
      '/account/payout',
      {},
      as('carol', { 'x-verified-phone-claim': String(first.body.claim) }),
    );
    expect(other.body).toMatchObject({ status: 403, reason: 'missing' });
  });

  it('the signed claim: step-up without the API within its lifetime, only for its owner, and the route age limit', async () => {
    await boot({ verifiedPhone: { claimTtlMs: 900_000, header: 'X-Phone-Verification' } });
    const done = await verification('bob', true);
    // The configured header (case-insensitive).
    const first = await call(
      suite.host!.url,
      'POST',
      '/account/phone',
      {},
      as('bob', { 'X-Phone-Verification': done.id }),
    );
    expect(first.status).toBe(201);
    const claim = String(first.body.claim);

    const readsBefore = suite.sb.requestCount('GET /v1/verify/:id');
    const stepUp = await call(
      suite.host!.url,
      'POST',
      '/account/payout',
      {},
      as('bob', { 'x-verified-phone-claim': claim }),
    );
    expect(stepUp.status).toBe(201);
    expect(stepUp.body).toMatchObject({ phone: done.phone, source: 'claim' });
    expect(suite.sb.requestCount('GET /v1/verify/:id')).toBe(readsBefore);

    const stolen = await call(
      suite.host!.url,
      'POST',
      '/account/payout',
      {},
      as('eve', { 'x-verified-phone-claim': claim }),
    );
    expect(stolen.body).toMatchObject({
      status: 403,
      error_code: 'phone_verification_required',
      reason: 'invalid_claim',
    });
    const [prefix, body, mac] = claim.split('.');
    const altered = Buffer.from(Buffer.from(body!, 'base64url').toString().replace('bob', 'eve')).toString(
      'base64url',
    );
    expect(
      (
        await call(
          suite.host!.url,
          'POST',
          '/account/payout',
          {},
          as('eve', { 'x-verified-phone-claim': `${prefix}.${altered}.${mac}` }),
        )
      ).status,
    ).toBe(403);

    // Eleven minutes on: the claim still lives (15 min) but the payout wants a verification of the last 10.
    await suite.sb.advance(660_000);
    const old = await call(
      suite.host!.url,
      'POST',
      '/account/payout',
      {},
      as('bob', { 'x-verified-phone-claim': claim }),
    );
    expect(old.body).toMatchObject({
      status: 403,
      error_code: 'phone_verification_required',
      reason: 'stale',
    });
    // The route without an age limit still takes it, until the claim's own lifetime ends.
    expect(
      (
        await call(
          suite.host!.url,
          'POST',
          '/account/phone',
          {},
          as('bob', { 'x-verified-phone-claim': claim }),
        )
      ).status,
    ).toBe(201);
    await suite.sb.advance(300_000);
    const expiredClaim = await call(
      suite.host!.url,
      'POST',
      '/account/phone',
      {},
      as('bob', { 'x-verified-phone-claim': claim }),
    );
    expect(expiredClaim.body).toMatchObject({
      error_code: 'phone_verification_required',
      reason: 'invalid_claim',
    });
  });
});

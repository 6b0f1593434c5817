/**
 * A purpose per verification, over real HTTP against the sandbox: `purpose` on start is validated
 * (400 problems with stable codes, nothing sent), picks its policy (methods, `[]` as none, its own
 * per-number limit, its claim lifetime), and is carried in events, history and claims;
 * `@RequireVerifiedPhone({ purpose })` refuses a verification or claim of another purpose, and a
 * handler's purpose wins over its class's.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Post } from '@nestjs/common';
import { RequireVerifiedPhone, VerifiedPhone } from '../../src/guard/verified-phone.decorators.js';
import type { VerifiedPhoneDetails } from '../../src/guard/verified-phone.request.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { PURPOSE_PRESETS } from '../../src/options/purposes.options.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, type Platform } from '../support/verification-app.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { storeFor, type StoreKind } from '../verified-phone/guard-host.js';
import { moduleOptions } from '../webhooks/harness.js';

const STEP_UP_CLAIM_MS = 60_000;
const DEFAULT_CLAIM_MS = 600_000;
const INITIATIONS = 'POST /v1/verify';

const answer = (details: VerifiedPhoneDetails) => ({
  phone: details.phoneNumber,
  purpose: details.purpose ?? null,
  claim: details.claim,
});

/** The class asks for `step_up`; one handler asks for `change_phone` instead, one says nothing. */
@Controller('secure')
@RequireVerifiedPhone({ purpose: 'step_up' })
class SecureController {
  @Post('payout')
  payout(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
    return answer(details);
  }

  @Post('phone')
  @RequireVerifiedPhone({ purpose: 'change_phone' })
  phone(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
    return answer(details);
  }
}

@Controller('open')
class OpenController {
  @Post()
  @RequireVerifiedPhone()
  open(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
    return answer(details);
  }
}

let serial = 0;
const phoneNumber = () =>
  `+7916444${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;

const PURPOSES: VerificationModuleOptions['purposes'] = {
  step_up: {
    ...PURPOSE_PRESETS.stepUp,
    claimTtlMs: STEP_UP_CLAIM_MS,
    limits: { startPerPhone: { points: 2, windowMs: 3_600_000 } },
  },
  login: { methods: ['sms', 'flash_call'] },
  payout_review: { methods: [] },
  kyc: PURPOSE_PRESETS.noForeignMessengers,
};

/** Each platform on its own store: the purpose's counters, records and claims on Memory and on Redis. */
const CASES: [Platform, StoreKind][] = [
  ['express', 'memory'],
  ['fastify', 'redis'],
];

describe.each(CASES)('a purpose per verification (%s, %s store)', (platform: Platform, storeKind) => {
  const suite = sandboxSuite();
  let store: ReturnType<typeof storeFor> | undefined;
  afterEach(async () => {
    await suite.host?.close();
    suite.host = undefined;
    if (store !== undefined && 'close' in store) await (store as VerificationStore).close();
    store = undefined;
  });

  async function boot(extra: Partial<VerificationModuleOptions> = {}) {
    store = storeFor(storeKind, suite.sb);
    suite.host = await createTestApp({
      platform,
      module: moduleOptions(suite.sb, {
        store,
        purposes: PURPOSES,
        verifiedPhone: { claimTtlMs: DEFAULT_CLAIM_MS },
        history: {},
        ...extra,
      }),
      controllers: [SecureController, OpenController],
    });
    return suite.host;
  }
  const start = (body: Record<string, unknown>, user = 'alice') =>
    call(suite.host!.url, 'POST', '/verification/start', body, { 'x-user': user });
  const post = (path: string, headers: Record<string, string>, user = 'alice') =>
    call(suite.host!.url, 'POST', path, {}, { 'x-user': user, ...headers });

  /** A verification of `purpose` (none: no purpose named), verified by the user's own call. */
  async function verified(purpose: string | undefined, user = 'alice', phone = phoneNumber()) {
    const started = await start(
      { phone_number: phone, method: 'reverse_flash_call', ...(purpose ? { purpose } : {}) },
      user,
    );
    expect(started.status).toBe(201);
    const [session] = suite.sb.sessionsFor(phone);
    await suite.sb.call(session!.request_id, phone);
    return { id: String(started.body.verification_id), phone };
  }

  it('a bad purpose is a 400 problem with a stable code, and nothing is sent', async () => {
    await boot();
    const before = suite.sb.requestCount(INITIATIONS);
    for (const purpose of ['Step Up', '', 'x'.repeat(33), 'step_up!'])
      expect((await start({ phone_number: phoneNumber(), purpose })).body).toMatchObject({
        status: 400,
        error_code: 'validation_error',
      });
    // What a page may show: the field named and the rule a purpose's name follows.
    const rule = 'purpose must be a purpose name (lower-case letters, digits, _ or -, at most 32)';
    for (const purpose of ['Step Up', '', 'step_up!'])
      expect((await start({ phone_number: phoneNumber(), purpose })).body).toMatchObject({
        detail: rule,
        errors: [{ field: 'purpose', message: rule }],
      });
    const wrongType = await start({ phone_number: phoneNumber(), purpose: 7 });
    expect(wrongType.body).toMatchObject({ status: 400, error_code: 'validation_error' });
    const undeclared = await start({ phone_number: phoneNumber(), purpose: 'payout' });
    expect(undeclared.status).toBe(400);
    expect(undeclared.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(undeclared.body).toMatchObject({
      status: 400,
      error_code: 'purpose_not_allowed',
      purpose: 'payout',
      detail: 'Purpose "payout" is not accepted here',
    });
    expect(suite.sb.requestCount(INITIATIONS) - before).toBe(0);
  });

  it("a purpose's methods: [] allows none (a clear refusal, nothing sent); a list narrows auto and refuses others", async () => {
    await boot();
    const before = suite.sb.requestCount(INITIATIONS);
    for (const method of [undefined, 'sms'])
      expect(
        (
          await start({
            phone_number: phoneNumber(),
            purpose: 'payout_review',
            ...(method ? { method } : {}),
          })
        ).body,
      ).toMatchObject({
        status: 400,
        error_code: 'method_not_available',
        available_methods: [],
        purpose: 'payout_review',
        detail: 'No method is offered here for purpose "payout_review"',
      });
    const foreign = await start({
      phone_number: phoneNumber(),
      purpose: 'login',
      method: 'reverse_flash_call',
    });
    expect(foreign.body).toMatchObject({ status: 400, error_code: 'method_not_available' });
    expect([...(foreign.body.available_methods as string[])].sort()).toEqual(['flash_call', 'sms']);
    expect(suite.sb.requestCount(INITIATIONS) - before).toBe(0);
    const auto = await start({ phone_number: phoneNumber(), purpose: 'login' });
    expect(auto.status).toBe(201);
    expect(['sms', 'flash_call']).toContain(auto.body.method);
    // The preset leaves out foreign messengers; no purpose (the default policy) keeps them.
    expect(
      (await start({ phone_number: phoneNumber(), purpose: 'kyc', method: 'msgr1_otp' })).body,
    ).toMatchObject({
      error_code: 'method_not_available',
    });
    expect((await start({ phone_number: phoneNumber(), method: 'msgr1_otp' })).status).toBe(201);
    // A built-in purpose nobody declared follows the default policy.
    expect(
      (await start({ phone_number: phoneNumber(), purpose: 'signup', method: 'msgr1_otp' })).status,
    ).toBe(201);
  });

  it('a purpose a host names "undefined" is its own: a start that names none keeps the default policy', async () => {
    await boot({ purposes: { ...PURPOSES, undefined: { methods: [] } } });
    expect((await start({ phone_number: phoneNumber(), purpose: 'undefined' })).body).toMatchObject({
      status: 400,
      error_code: 'method_not_available',
      purpose: 'undefined',
    });
    expect((await start({ phone_number: phoneNumber() })).status).toBe(201);
  });

  it("a switch stays among its journey's purpose's methods and keeps its purpose", async () => {
    const host = await boot();
    const phone = phoneNumber();
    const started = await start({ phone_number: phone, purpose: 'login', method: 'sms' });
    const id = String(started.body.verification_id);
    await suite.sb.advance(3000);
    const away = await call(
      host.url,
      'POST',
      '/verification/switch',
      { verification_id: id, method: 'reverse_flash_call' },
      { 'x-user': 'alice' },
    );
    expect(away.body).toMatchObject({ status: 400, error_code: 'method_not_available' });
    const moved = await call(
      host.url,
      'POST',
      '/verification/switch',
      { verification_id: id, method: 'flash_call' },
      { 'x-user': 'alice' },
    );
    expect(moved.status).toBe(201);
    const sessions = suite.sb.sessionsFor(phone);
    const flash = sessions.find((s) => s.method === 'flash_call')!;
    await suite.sb.deliver(flash.request_id);
    const code = String(suite.sb.getSession(flash.request_id)!.code);
    const checked = await call(
      host.url,
      'POST',
      '/verification/check',
      { verification_id: id, code },
      { 'x-user': 'alice' },
    );
    expect(checked.body).toMatchObject({ verified: true });
    expect(host.events.find((e) => e.event === 'verification.verified')).toMatchObject({
      purpose: 'login',
      method: 'flash_call',
    });
  });

  it('the purpose is carried in events and history, and the guard takes only its own purpose', async () => {
    const host = await boot();
    const stepUp = await verified('step_up');
    const none = await verified(undefined);
    // Read once each: the module observes the outcomes and emits their events.
    for (const { id } of [stepUp, none])
      await call(host.url, 'GET', `/verification/status/${id}`, undefined, { 'x-user': 'alice' });
    expect(host.events.filter((e) => e.event === 'verification.verified').map((e) => e.purpose)).toEqual([
      'step_up',
      undefined,
    ]);
    const entries = await host.app.get(VerificationHistory).list({ phoneNumber: stepUp.phone });
    expect(entries.map((e) => [e.kind, e.purpose])).toEqual([
      ['start', 'step_up'],
      ['outcome', 'step_up'],
    ]);

    const byId = { 'x-verification-id': stepUp.id };
    const payout = await post('/secure/payout', byId);
    expect(payout.body).toMatchObject({ phone: stepUp.phone, purpose: 'step_up' });
    // The handler's change_phone wins over the class's step_up.
    expect((await post('/secure/phone', byId)).body).toMatchObject({
      status: 403,
      error_code: 'phone_verification_required',
      reason: 'purpose',
    });
    // No purpose is not a purpose: refused where one is required, taken where none is.
    expect((await post('/secure/payout', { 'x-verification-id': none.id })).body).toMatchObject({
      status: 403,
      reason: 'purpose',
    });
    expect((await post('/open', { 'x-verification-id': none.id })).body).toMatchObject({ purpose: null });

    // The claim carries the purpose: taken by its purpose's route, refused by another's.
    const claim = { 'x-verified-phone-claim': String(payout.body.claim) };
    expect((await post('/secure/payout', claim)).body).toMatchObject({ purpose: 'step_up' });
    expect((await post('/secure/phone', claim)).body).toMatchObject({ status: 403, reason: 'purpose' });
    const plain = await post('/open', { 'x-verification-id': none.id });
    expect(
      (await post('/secure/payout', { 'x-verified-phone-claim': String(plain.body.claim) })).body,
    ).toMatchObject({ status: 403, reason: 'purpose' });
  });

  it("a claim lives its purpose's lifetime: taken a tick before its end, refused at it; no purpose keeps the default", async () => {
    await boot();
    const stepUp = await verified('step_up');
    const none = await verified(undefined);
    const stepClaim = {
      'x-verified-phone-claim': String(
        (await post('/secure/payout', { 'x-verification-id': stepUp.id })).body.claim,
      ),
    };
    const plainClaim = {
      'x-verified-phone-claim': String((await post('/open', { 'x-verification-id': none.id })).body.claim),
    };
    await suite.sb.advance(STEP_UP_CLAIM_MS - 1);
    expect((await post('/secure/payout', stepClaim)).status).toBe(201);
    await suite.sb.advance(1);
    expect((await post('/secure/payout', stepClaim)).body).toMatchObject({
      status: 403,
      reason: 'invalid_claim',
    });
    expect((await post('/open', plainClaim)).status).toBe(201);
  });

  it('coalescing hands a pending session back only to a start of the same purpose', async () => {
    await boot({ limits: { enabled: false, coalesceStarts: true } });
    const phone = phoneNumber();
    const signup = await start({ phone_number: phone, method: 'sms', purpose: 'signup' });
    const stepUp = await start({ phone_number: phone, method: 'sms', purpose: 'step_up' });
    expect(stepUp.status).toBe(201);
    expect(stepUp.body).toMatchObject({ resumed: false });
    expect(stepUp.body.verification_id).not.toBe(signup.body.verification_id);
    const again = await start({ phone_number: phone, method: 'sms', purpose: 'step_up' });
    expect(again.body).toMatchObject({ resumed: true, verification_id: stepUp.body.verification_id });
    const none = await start({ phone_number: phone, method: 'sms' });
    expect(none.body).toMatchObject({ resumed: false });
  });

  it("a purpose's own per-number limit counts its starts only, across callers", async () => {
    await boot();
    const phone = phoneNumber();
    expect((await start({ phone_number: phone, purpose: 'step_up', method: 'sms' }, 'alice')).status).toBe(
      201,
    );
    expect(
      (await start({ phone_number: phone, purpose: 'step_up', method: 'flash_call' }, 'bob')).status,
    ).toBe(201);
    const before = suite.sb.requestCount(INITIATIONS);
    const third = await start({ phone_number: phone, purpose: 'step_up', method: 'msgr1_otp' }, 'carol');
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({
      status: 429,
      error_code: 'rate_limit_exceeded',
      reason: 'start_phone_limit',
    });
    expect(suite.sb.requestCount(INITIATIONS)).toBe(before);
    // Another purpose (or none) to the same number is not counted by it.
    expect((await start({ phone_number: phone, purpose: 'login', method: 'sms' }, 'dave')).status).toBe(201);
    expect((await start({ phone_number: phone, method: 'msgr1_otp' }, 'erin')).status).toBe(201);
  });
});

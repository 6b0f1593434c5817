/**
 * The guard at its bounds, attacked: a claim is taken a tick before its lifetime ends and refused at
 * its end; a handler's `allowTestNumbers` and `within` win over its class's, by a `verification_id` and by a
 * claim alike; ids that are not the caller's, unknown or ended cost the API no read however often
 * they are presented.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Post } from '@nestjs/common';
import { RequireVerifiedPhone, VerifiedPhone } from '../../src/guard/verified-phone.decorators.js';
import type { VerifiedPhoneDetails } from '../../src/guard/verified-phone.request.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, type Platform, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';
import { as, burst, storeFor, WITHIN_MS, type StoreKind } from './guard-host.js';

const GETS = 'GET /v1/verify/:id';
const CLAIM_TTL_MS = 2 * WITHIN_MS;
const REVIEWER = '+79990000002';
const CASES: [Platform, StoreKind][] = [
  ['express', 'memory'],
  ['fastify', 'redis'],
];

/** Test numbers allowed on the class; one handler takes them back, one says nothing. */
@Controller('demo')
@RequireVerifiedPhone({ allowTestNumbers: true })
class DemoController {
  @Post('open')
  open(@VerifiedPhone('details') details: VerifiedPhoneDetails) {
    return { phone: details.phoneNumber, claim: details.claim, test: details.test };
  }

  @Post('real-only')
  @RequireVerifiedPhone({ allowTestNumbers: false })
  realOnly(@VerifiedPhone() phone: string) {
    return { phone };
  }
}

/** `within` on the class; one handler asks for a longer age, one for a shorter, one says nothing. */
@Controller('aged')
@RequireVerifiedPhone({ within: WITHIN_MS })
class AgedController {
  @Post('class')
  byClass(@VerifiedPhone() phone: string) {
    return { phone };
  }

  @Post('longer')
  @RequireVerifiedPhone({ within: 2 * WITHIN_MS })
  longer(@VerifiedPhone() phone: string) {
    return { phone };
  }

  @Post('shorter')
  @RequireVerifiedPhone({ within: WITHIN_MS / 2 })
  shorter(@VerifiedPhone() phone: string) {
    return { phone };
  }
}

let serial = 0;
const realNumber = () =>
  `+7916555${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;

describe.each(CASES)('the guard at its bounds (%s, %s store)', (platform, storeKind) => {
  const suite = sandboxSuite();
  let app: TestApp | undefined;
  let store: ReturnType<typeof storeFor> | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    if (store !== undefined && 'close' in store) await (store as VerificationStore).close();
    store = undefined;
  });

  async function boot() {
    store = storeFor(storeKind, suite.sb);
    const base = moduleOptions(suite.sb, {
      verifiedPhone: { claimTtlMs: CLAIM_TTL_MS },
      testNumbers: { numbers: [{ phoneNumber: REVIEWER, outcome: 'verified' }] },
      store,
    });
    app = await createTestApp({ platform, module: base, controllers: [DemoController, AgedController] });
    suite.host = app;
    return app;
  }
  const post = (path: string, headers: Record<string, string>) => call(app!.url, 'POST', path, {}, headers);

  async function verified(user: string, phone_number: string) {
    const started = await call(
      app!.url,
      'POST',
      '/verification/start',
      { phone_number, method: 'reverse_flash_call' },
      as(user),
    );
    expect(started.status).toBe(201);
    const id = String(started.body.verification_id);
    const [session] = suite.sb.sessionsFor(phone_number);
    if (session) await suite.sb.call(session.request_id, phone_number);
    return id;
  }

  it("a handler's allowTestNumbers: false wins over its class's true, by the id and by the claim", async () => {
    await boot();
    const id = await verified('reviewer', REVIEWER);
    const byId = as('reviewer', { 'x-verification-id': id });
    const open = await post('/demo/open', byId);
    expect(open.body).toMatchObject({ phone: REVIEWER, test: true });
    const byClaim = as('reviewer', { 'x-verified-phone-claim': String(open.body.claim) });
    expect((await post('/demo/open', byClaim)).body).toMatchObject({ phone: REVIEWER, test: true });
    for (const headers of [byId, byClaim])
      expect((await post('/demo/real-only', headers)).body).toMatchObject({
        status: 403,
        error_code: 'phone_verification_required',
        reason: 'test_number',
      });
    // A real number passes both.
    const real = realNumber();
    const realId = await verified('alice', real);
    expect((await post('/demo/real-only', as('alice', { 'x-verification-id': realId }))).body).toEqual({
      phone: real,
    });
  });

  it("a handler's within wins over its class's, longer or shorter, at the bound and a tick past it", async () => {
    await boot();
    const real = realNumber();
    const byId = as('alice', { 'x-verification-id': await verified('alice', real) });
    const stale = { status: 403, error_code: 'phone_verification_required' };
    await suite.sb.advance(WITHIN_MS / 2);
    expect((await post('/aged/shorter', byId)).body).toEqual({ phone: real });
    await suite.sb.advance(1);
    expect((await post('/aged/shorter', byId)).body).toMatchObject(stale);
    expect((await post('/aged/class', byId)).body).toEqual({ phone: real });
    await suite.sb.advance(WITHIN_MS / 2 - 1);
    expect((await post('/aged/class', byId)).body).toEqual({ phone: real });
    await suite.sb.advance(1);
    expect((await post('/aged/class', byId)).body).toMatchObject(stale);
    expect((await post('/aged/longer', byId)).body).toEqual({ phone: real });
    await suite.sb.advance(WITHIN_MS);
    expect((await post('/aged/longer', byId)).body).toMatchObject(stale);
  });

  it('a claim is taken a tick before its lifetime ends and refused at its end, replayed or not', async () => {
    await boot();
    const real = realNumber();
    const id = await verified('alice', real);
    const issued = await post('/demo/open', as('alice', { 'x-verification-id': id }));
    expect(issued.body.test).toBe(false);
    const byClaim = as('alice', { 'x-verified-phone-claim': String(issued.body.claim) });
    await suite.sb.advance(CLAIM_TTL_MS - 1);
    expect((await post('/demo/real-only', byClaim)).body).toEqual({ phone: real });
    await suite.sb.advance(1);
    for (let i = 0; i < 2; i++)
      expect((await post('/demo/real-only', byClaim)).body).toMatchObject({
        status: 403,
        reason: 'invalid_claim',
      });
  });

  it("another owner's, an unknown and an ended verification cost the API no read, however often presented", async () => {
    await boot();
    const url = `${app!.url}/demo/real-only`;
    const started = await call(
      app!.url,
      'POST',
      '/verification/start',
      { phone_number: realNumber(), method: 'sms' },
      as('bob'),
    );
    const bobs = String(started.body.verification_id);
    const ended = await call(app!.url, 'POST', '/verification/cancel', { verification_id: bobs }, as('bob'));
    expect(ended.status).toBeLessThan(300);
    const pending = await call(
      app!.url,
      'POST',
      '/verification/start',
      { phone_number: realNumber(), method: 'sms' },
      as('bob'),
    );
    const bobsPending = String(pending.body.verification_id);
    const before = suite.sb.requestCount(GETS);
    const forged = `${bobsPending.slice(0, -4)}AAAA`;
    const statuses = [
      ...(await burst(100, 25, url, as('mallory', { 'x-verification-id': bobsPending }))),
      ...(await burst(100, 25, url, as('mallory', { 'x-verification-id': forged }))),
      ...(await burst(100, 25, url, as('mallory', { 'x-verification-id': 'unknown' }))),
      ...(await burst(100, 25, url, as('bob', { 'x-verification-id': bobs }))),
    ];
    expect(statuses.slice(0, 300).every((status) => status === 403)).toBe(true);
    expect(statuses.slice(300).every((status) => status === 409)).toBe(true);
    expect(suite.sb.requestCount(GETS) - before).toBe(0);
  });
});

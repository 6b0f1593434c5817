/**
 * What a caller reads when the guard refuses it: each refusal's problem (status, error_code, reason and
 * the sentence in `detail` a frontend shows), and where the guard looks for the `verification_id` (an
 * empty header is none: the body field is read; an empty body field is none: "missing", and no read
 * upstream). On Express and Fastify, against the sandbox and its clock.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Post } from '@nestjs/common';
import { RequireVerifiedPhone, VerifiedPhone } from '../../src/guard/verified-phone.decorators.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { moduleOptions } from '../webhooks/harness.js';
import { CapturingLogger } from '../support/log-capture.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { as } from './guard-host.js';

const REVIEWER = '+79990000003';
const WITHIN_MS = 600_000;
const GETS = 'GET /v1/verify/:id';

@Controller('answers')
class AnswersController {
  @Post('open')
  @RequireVerifiedPhone()
  open(@VerifiedPhone() phone: string) {
    return { phone };
  }

  @Post('aged')
  @RequireVerifiedPhone({ within: WITHIN_MS })
  aged(@VerifiedPhone() phone: string) {
    return { phone };
  }

  @Post('step-up')
  @RequireVerifiedPhone({ purpose: 'step_up' })
  stepUp(@VerifiedPhone() phone: string) {
    return { phone };
  }
}

let serial = 0;
const realNumber = () =>
  `+7916333${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;

describe.each(PLATFORMS)('what the guard answers a caller it refuses (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let app: TestApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function boot(overrides: Partial<VerificationModuleOptions> = {}, logger?: CapturingLogger) {
    app = await createTestApp({
      platform,
      ...(logger === undefined ? {} : { logger }),
      module: moduleOptions(suite.sb, {
        verifiedPhone: { claimTtlMs: 2 * WITHIN_MS },
        testNumbers: { numbers: [{ phoneNumber: REVIEWER, outcome: 'verified' }] },
        ...overrides,
      }),
      controllers: [AnswersController],
    });
    suite.host = app;
  }
  const post = (path: string, headers: Record<string, string>, body: Record<string, unknown> = {}) =>
    call(app!.url, 'POST', path, body, headers);

  /** A reverse flash call started by `user`; `called` makes the sandbox take the caller's call (verified). */
  async function started(user: string | undefined, phone_number: string, called = true) {
    const answer = await call(
      app!.url,
      'POST',
      '/verification/start',
      { phone_number, method: 'reverse_flash_call' },
      user === undefined ? {} : as(user),
    );
    expect(answer.status).toBe(201);
    const [session] = suite.sb.sessionsFor(phone_number);
    if (called && session) await suite.sb.call(session.request_id, phone_number);
    return String(answer.body.verification_id);
  }

  const refused = (reason: string, detail: string) => ({
    status: 403,
    error_code: 'phone_verification_required',
    reason,
    detail,
  });

  it('each refusal names its reason and says what to do in its detail', async () => {
    await boot();
    const needs = 'This action needs a verified phone number';
    expect((await post('/answers/open', as('alice'))).body).toMatchObject(refused('missing', needs));
    expect((await post('/answers/open', as('alice', { 'x-verification-id': 'nope' }))).body).toMatchObject(
      refused('unknown', needs),
    );
    expect(
      (await post('/answers/open', as('alice', { 'x-verified-phone-claim': 'vpc1.e30.AAAA' }))).body,
    ).toMatchObject(refused('invalid_claim', 'The verified-phone claim is not valid for this caller'));

    const pending = await started('alice', realNumber(), false);
    expect((await post('/answers/open', as('alice', { 'x-verification-id': pending }))).body).toMatchObject({
      status: 409,
      error_code: 'phone_not_verified',
      detail: 'The phone number is not verified',
      verification_status: 'sent',
    });

    const reviewer = await started('reviewer', REVIEWER);
    expect(
      (await post('/answers/open', as('reviewer', { 'x-verification-id': reviewer }))).body,
    ).toMatchObject(refused('test_number', 'This action does not take a test number'));

    const real = realNumber();
    const id = await started('alice', real);
    const byId = as('alice', { 'x-verification-id': id });
    expect((await post('/answers/step-up', byId)).body).toMatchObject(
      refused('purpose', 'This action needs a phone verified for "step_up"'),
    );
    expect((await post('/answers/aged', byId)).body).toEqual({ phone: real });
    await suite.sb.advance(WITHIN_MS + 1);
    expect((await post('/answers/aged', byId)).body).toMatchObject(
      refused('stale', 'The phone verification is too old for this action: verify again'),
    );
  });

  it('an empty header is no id (the body field is read); an empty body field is "missing" and reads nothing upstream; a body that is no object is a 4xx', async () => {
    await boot();
    const real = realNumber();
    const id = await started('alice', real);
    const fromBody = await post('/answers/open', as('alice', { 'x-verification-id': '' }), {
      verification_id: id,
    });
    expect(fromBody.body).toEqual({ phone: real });

    const reads = suite.sb.requestCount(GETS);
    for (const body of [{ verification_id: '' }, { verification_id: 42 }, {}])
      expect(
        (await post('/answers/open', as('alice', { 'x-verification-id': '' }), body)).body,
      ).toMatchObject(refused('missing', 'This action needs a verified phone number'));
    expect(suite.sb.requestCount(GETS)).toBe(reads);
    // JSON that is no object (Fastify parses `null` and lists, Express refuses them): a 4xx, never a 500.
    for (const raw of ['null', '[]', '"id"']) {
      const answer = await call(app!.url, 'POST', '/answers/open', raw, as('alice'));
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    }
  });

  it('an owner resolver that answers null for a signed-out caller: its own verification opens the route, as with undefined', async () => {
    // A JavaScript host's resolver (`req.user?.id ?? null`): the types say undefined, the guard takes both.
    const owner = (req: unknown) =>
      (req as { headers: Record<string, string | undefined> }).headers['x-user'] ?? null;
    await boot({ owner: owner as VerificationModuleOptions['owner'] });
    const real = realNumber();
    const id = await started(undefined, real);
    expect((await post('/answers/open', { 'x-verification-id': id })).body).toEqual({ phone: real });
    // A signed-in caller presenting it is another owner: the same 403 as an unknown id.
    expect((await post('/answers/open', as('alice', { 'x-verification-id': id }))).body).toMatchObject(
      refused('unknown', 'This action needs a verified phone number'),
    );
  });

  it("a store that fails the guard's read: the caller gets a 503 problem, the operator an error line naming the read", async () => {
    const logger = new CapturingLogger();
    const memory = new MemoryStore({ clock: () => suite.sb.now() });
    let failing = false;
    // The host's store, whose reads fail once `failing` is set (a store outage as the guard meets it).
    const store = new Proxy(memory, {
      get(target, prop) {
        if (failing && prop === 'get') return () => Promise.reject(new Error('store down'));
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    await boot({ store, logLevels: ['error'] }, logger);
    const id = await started('alice', realNumber());
    failing = true;
    const answer = await post('/answers/open', as('alice', { 'x-verification-id': id }));
    failing = false;
    // The host's filter renders it (its content type is the host's): the module's problem, nothing of the store.
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ status: 503, error_code: 'service_unavailable' });
    expect(answer.text).not.toContain('store down');
    expect(logger.lines.filter((l) => / failed /.test(l))).toEqual([
      expect.stringMatching(/^error getVerifiedPhone failed route=getVerifiedPhone error=/),
    ]);
  });
});

/**
 * `testNumbers`: reviewer and demo numbers with a fixed code. The module plays their sessions
 * itself (nothing reaches the API, nothing is billed; only the caller's own limits count it), the
 * routes and events behave as for a real number, and every event and log line says test.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { EventEmitterModule } from '@nestjs/event-emitter';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { reconciler } from '../journeys/journey-host.js';
import { startAccountHost } from '../webhooks/harness.js';
import { CapturingLogger } from '../support/log-capture.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { dumpMemoryStore } from '../support/store-dump.js';
import type { StoreWriteOptions } from '../../src/store/verification-store.interface.js';
import { call, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const REVIEWER = '+79990000001';
const AUTO_VERIFIED = '+79990000002';
const EXPIRES = '+79990000003';
const FAILS = '+79990000004';
const FALLBACK = '+79990000005';
const CODE = '246810';

const TEST_NUMBERS: VerificationModuleOptions['testNumbers'] = {
  numbers: [
    { phoneNumber: REVIEWER, code: CODE },
    { phoneNumber: AUTO_VERIFIED, outcome: 'verified' },
    { phoneNumber: EXPIRES, outcome: 'expired' },
    { phoneNumber: FAILS, outcome: 'failed' },
    { phoneNumber: FALLBACK, code: '1357', outcome: 'code_required' },
  ],
};

describe.each(PLATFORMS)('test numbers (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp | undefined;
  let logger: CapturingLogger;

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  async function boot(overrides: Partial<VerificationModuleOptions> = {}): Promise<TestApp> {
    logger = new CapturingLogger();
    host = await startAccountHost(platform, sb, {
      logger,
      module: {
        testNumbers: TEST_NUMBERS,
        logLevels: ['log', 'warn', 'error', 'debug'],
        ...overrides,
      },
    });
    sb.resetRequestCounts();
    return host;
  }

  const post = (path: string, body: unknown, user = 'reviewer') =>
    call(host!.url, 'POST', `/verification/${path}`, body, { 'x-user': user });
  const get = (path: string, user = 'reviewer') =>
    call(host!.url, 'GET', `/verification/${path}`, undefined, { 'x-user': user });
  /** Requests that reached the API about sessions (the price list is read for the offered methods). */
  const sessionCalls = () =>
    sb.requestCount('POST /v1/verify') +
    sb.requestCount('POST /v1/verify/check') +
    sb.requestCount('GET /v1/verify/:id');

  it('a reviewer number verifies with its fixed code over the routes, events say test, the API is never asked', async () => {
    await boot();
    const started = await post('start', { phone_number: REVIEWER, method: 'sms' });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ method: 'sms', status: 'sent', code_length: CODE.length });
    const id = started.body.verification_id;

    const wrong = await post('check', { verification_id: id, code: '111111' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ error_code: 'invalid_code', attempts_remaining: 2 });
    expect(wrong.headers.get('content-type')).toContain('application/problem+json');

    const right = await post('check', { verification_id: id, code: CODE });
    expect(right.body).toEqual({ verification_id: id, status: 'verified', verified: true });
    expect((await get(`status/${String(id)}`)).body).toMatchObject({ status: 'verified' });
    await expect(host!.app.get(VerificationService).getVerifiedPhone(String(id), 'reviewer')).resolves.toBe(
      REVIEWER,
    );

    expect(host!.events).toHaveLength(1);
    expect(host!.events[0]).toMatchObject({
      event: 'verification.verified',
      phoneNumber: REVIEWER,
      test: true,
      source: 'check',
      owner: 'reviewer',
    });
    expect(host!.events[0]!.requestId).toMatch(/^test_/);
    // Nothing about sessions reached the API, and nothing was billed.
    expect(sessionCalls()).toBe(0);
    expect(sb.sessionsFor(REVIEWER)).toHaveLength(0);
    // Every line about the test session says so.
    const lines = logger.lines.filter((line) =>
      /^\w+ (start|check|check refused|verification\.verified) /.test(line),
    );
    expect(lines.length).toBeGreaterThanOrEqual(4);
    for (const line of lines) expect(line).toContain('test=true');
  });

  it('a real number is never matched by the test list (exact numbers only): it goes to the API', async () => {
    await boot();
    const near = '+79990000011';
    const started = await post('start', { phone_number: near, method: 'sms' });
    expect(started.status).toBe(201);
    expect(sb.sessionsFor(near)).toHaveLength(1);
    const wrong = await post('check', { verification_id: started.body.verification_id, code: CODE });
    expect(wrong.body.error_code).toBe('invalid_code');
    expect(logger.lines.filter((line) => line.includes('test=true'))).toEqual([]);
  });

  it('outcomes play at the first read: verified (no code entry), expired, failed, code_required', async () => {
    await boot();
    const call1 = await post('start', { phone_number: AUTO_VERIFIED, method: 'reverse_flash_call' });
    expect(call1.body).toMatchObject({ method: 'reverse_flash_call', status: 'sent' });
    expect(String(call1.body.number_to_call)).toMatch(/^\+7\d{10}$/);
    const readAt = sb.now();
    const verified = (await get(`status/${String(call1.body.verification_id)}`)).body;
    expect(verified).toMatchObject({ status: 'verified', awaiting_code: false });
    // Verified at its first read, as if the user had acted at once (the module's clock is the sandbox's).
    expect(Date.parse(String(verified.verified_at)) - readAt).toBeGreaterThanOrEqual(0);
    expect(Date.parse(String(verified.verified_at)) - readAt).toBeLessThan(5_000);

    const expires = await post('start', { phone_number: EXPIRES, method: 'sms' });
    expect((await get(`status/${String(expires.body.verification_id)}`)).body).toMatchObject({
      status: 'expired',
      verified_at: null,
      awaiting_code: false,
    });
    const fails = await post('start', { phone_number: FAILS, method: 'sms' });
    expect((await get(`status/${String(fails.body.verification_id)}`)).body.status).toBe('failed');

    const push = await post('start', { phone_number: FALLBACK, method: 'operator_id' });
    expect(push.body.awaiting_code).toBe(false);
    expect((await get(`status/${String(push.body.verification_id)}`)).body.awaiting_code).toBe(true);
    expect(
      (await post('check', { verification_id: push.body.verification_id, code: '1357' })).body.verified,
    ).toBe(true);
    // Its code was asked for; once verified, it no longer is.
    expect((await get(`status/${String(push.body.verification_id)}`)).body).toMatchObject({
      status: 'verified',
      awaiting_code: false,
    });

    expect(host!.events.map((e) => [e.event, e.phoneNumber, e.test])).toEqual([
      ['verification.verified', AUTO_VERIFIED, true],
      ['verification.expired', EXPIRES, true],
      ['verification.failed', FAILS, true],
      ['verification.code_required', FALLBACK, true],
      ['verification.verified', FALLBACK, true],
    ]);
    expect(sessionCalls()).toBe(0);
  });

  it('a check before any read of a session its number’s outcome ended is refused as an ended session’s (409 not_pending), no code compared', async () => {
    await boot();
    for (const [phone_number, status] of [
      [FAILS, 'failed'],
      [EXPIRES, 'expired'],
      [AUTO_VERIFIED, 'verified'],
    ] as const) {
      const started = await post('start', { phone_number, method: 'sms' });
      expect(started.body.status).toBe('sent');
      const id = started.body.verification_id;
      // The check is the session's first read: its outcome ends it there, before any code is compared.
      const checked = await post('check', { verification_id: id, code: '111111' });
      expect({ phone_number, status: checked.status, body: checked.body }).toMatchObject({
        phone_number,
        status: 409,
        body: { error_code: 'not_pending', verification_status: status },
      });
      expect(checked.body).not.toHaveProperty('attempts_remaining');
      expect((await get(`status/${String(id)}`)).body).toMatchObject({ status });
    }
  });

  it('a session left alone expires on the clock and the reconciler emits it; switch and cancel work as for a real number', async () => {
    await boot();
    const started = await post('start', { phone_number: REVIEWER, method: 'sms' });
    const id = started.body.verification_id;
    const switched = await post('switch', { verification_id: id, method: 'flash_call' });
    expect(switched.status).toBe(201);
    expect(switched.body).toMatchObject({
      verification_id: id,
      method: 'flash_call',
      code_length: CODE.length,
    });
    expect((await post('check', { verification_id: id, code: CODE })).body.verified).toBe(true);

    const left = await post('start', { phone_number: REVIEWER, method: 'msgr1_otp' });
    await sb.advance(301_000);
    await reconciler(host!).runOnce();
    // The switched-away sms session is followed to its outcome too, as a real one is.
    expect(host!.events.filter((e) => e.event === 'verification.expired').map((e) => e.method)).toEqual(
      expect.arrayContaining(['msgr1_otp', 'sms']),
    );
    expect((await get(`status/${String(left.body.verification_id)}`)).body.status).toBe('expired');

    const canceled = await post('start', { phone_number: REVIEWER, method: 'sms' });
    expect((await post('cancel', { verification_id: canceled.body.verification_id })).body).toMatchObject({
      status: 'canceled',
    });
    expect(sessionCalls()).toBe(0);
  });

  it("a switch's session is a step of its test number's journey: its verified event names the start's verification_id, both methods tried and the journey's purpose", async () => {
    await boot();
    const started = await post('start', { phone_number: REVIEWER, method: 'sms', purpose: 'login' });
    expect(started.status).toBe(201);
    const id = started.body.verification_id;
    expect((await post('switch', { verification_id: id, method: 'flash_call' })).status).toBe(201);
    expect((await post('check', { verification_id: id, code: CODE })).body.verified).toBe(true);
    const verified = host!.events.filter((e) => e.event === 'verification.verified');
    expect(verified).toHaveLength(1);
    expect(verified[0]).toMatchObject({
      verificationId: id,
      method: 'flash_call',
      methodsTried: ['sms', 'flash_call'],
      purpose: 'login',
      test: true,
    });
    // A start's own session carries its purpose as well.
    const alone = await post('start', { phone_number: AUTO_VERIFIED, method: 'sms', purpose: 'step_up' });
    expect((await get(`status/${String(alone.body.verification_id)}`)).body.status).toBe('verified');
    expect(host!.events.find((e) => e.phoneNumber === AUTO_VERIFIED)).toMatchObject({
      event: 'verification.verified',
      verificationId: alone.body.verification_id,
      methodsTried: ['sms'],
      purpose: 'step_up',
    });
  });

  it('with expirySeconds set, a test session lives as long as a real one: pending a tick before its end, expired at it', async () => {
    await boot({ expirySeconds: 120 });
    const at = sb.now();
    // Two sessions of the number, each read once (a read is shared within its poll interval).
    const [before, atEnd] = [
      await post('start', { phone_number: REVIEWER, method: 'msgr1_otp' }),
      await post('start', { phone_number: REVIEWER, method: 'sms' }),
    ];
    for (const started of [before, atEnd])
      expect(Date.parse(String(started.body.expires_at))).toBe(at + 120_000);
    await sb.advance(120_000 - 1);
    expect((await get(`status/${String(before.body.verification_id)}`)).body.status).not.toBe('expired');
    await sb.advance(1);
    expect((await get(`status/${String(atEnd.body.verification_id)}`)).body.status).toBe('expired');
    expect(sessionCalls()).toBe(0);
  });

  it("the caller's own limits and resend cooldown hold as for a real number; nothing else of protection is kept", async () => {
    await boot({
      limits: {
        startPerPhoneAndCaller: { points: 10, windowMs: 3_600_000 },
        startPerIp: { points: 3, windowMs: 3_600_000 },
        wrongCodesPerPhone: { points: 1, windowMs: 3_600_000 },
        spendCap: false,
        pumping: false,
      },
    });
    for (let i = 0; i < 2; i++) {
      const started = await post('start', { phone_number: REVIEWER, method: 'sms' });
      expect(started.status).toBe(201);
      // The resend cooldown holds as for a real number: its end is answered, and the caller's start
      // within it is handed its pending session back (coalescing), counting no start.
      expect(started.body.resumed).toBe(false);
      expect(Date.parse(String(started.body.resend_available_at))).toBe(sb.now() + 60_000);
      const again = await post('start', { phone_number: REVIEWER, method: 'sms' });
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({
        resumed: true,
        status: 'sent',
        resend_available_at: started.body.resend_available_at,
      });
      await sb.advance(60_000);
    }
    // The per-IP start limit (3) counts the caller's starts, whichever numbers: one left.
    expect((await post('start', { phone_number: '+79161230001', method: 'sms' })).status).toBe(201);
    const limited = await post('start', { phone_number: REVIEWER, method: 'sms' });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
    expect((await post('start', { phone_number: '+79161230002', method: 'sms' })).status).toBe(429);
  });

  it('a test session the store could not keep gives back what its start took: the address’s only start is free again', async () => {
    // The store refuses the one write of the played session (its outage during the start).
    let refuse = true;
    const store = new (class extends MemoryStore {
      override async set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions) {
        if (refuse && key.includes('test-number:session:')) {
          refuse = false;
          throw new Error('store refused the write');
        }
        return super.set(key, value, ttlMs, options);
      }
    })({ clock: () => sb.now() });
    try {
      await boot({
        store,
        limits: { startPerIp: { points: 1, windowMs: 3_600_000 }, spendCap: false, pumping: false },
      });
      const failed = await post('start', { phone_number: REVIEWER, method: 'sms' });
      expect(failed.status).toBe(503);
      expect(refuse).toBe(false);
      // Nothing was played: the address's only start is free again (a colleague at the same address).
      const again = await post('start', { phone_number: REVIEWER, method: 'sms' }, 'colleague');
      expect({ status: again.status, resumed: again.body.resumed }).toEqual({ status: 201, resumed: false });
      const checked = await post(
        'check',
        { verification_id: again.body.verification_id, code: CODE },
        'colleague',
      );
      expect(checked.body).toMatchObject({ verified: true });
      expect(sessionCalls()).toBe(0);
    } finally {
      await host?.close();
      host = undefined;
      await store.close();
    }
  });

  it("a switch takes the method's resend cooldown and names its end, and counts as the address's start, as a real switch does", async () => {
    await boot({
      limits: { startPerIp: { points: 2, windowMs: 3_600_000 }, spendCap: false, pumping: false },
    });
    const started = await post('start', { phone_number: REVIEWER, method: 'sms' });
    const id = started.body.verification_id;
    const switched = await post('switch', { verification_id: id, method: 'flash_call' });
    expect(switched.status).toBe(201);
    expect(Date.parse(String(switched.body.resend_available_at))).toBe(sb.now() + 60_000);
    // The start and the switch are the address's two starts: a colleague's start there is refused.
    const third = await post('start', { phone_number: '+79161230001', method: 'sms' }, 'colleague');
    expect({ status: third.status, error_code: third.body.error_code }).toEqual({
      status: 429,
      error_code: 'rate_limit_exceeded',
    });
  });

  it('the fixed code has a wrong-code budget per session and per number across sessions', async () => {
    await boot({
      testNumbers: {
        ...TEST_NUMBERS,
        maxAttempts: 2,
        wrongCodesPerNumber: { points: 3, windowMs: 3_600_000 },
      },
    });
    const first = await post('start', { phone_number: REVIEWER, method: 'sms' });
    expect(
      (await post('check', { verification_id: first.body.verification_id, code: '0000' })).body
        .attempts_remaining,
    ).toBe(1);
    const spent = await post('check', { verification_id: first.body.verification_id, code: '0001' });
    expect(spent.body).toMatchObject({ error_code: 'invalid_code', attempts_remaining: 0 });
    expect((await get(`status/${String(first.body.verification_id)}`)).body.status).toBe('failed');

    const second = await post('start', { phone_number: REVIEWER, method: 'sms' });
    expect((await post('check', { verification_id: second.body.verification_id, code: '0002' })).status).toBe(
      400,
    );
    // The number's budget (3) is spent: even the right code no longer verifies until the window ends.
    const right = await post('check', { verification_id: second.body.verification_id, code: CODE });
    expect(right.body).toMatchObject({ error_code: 'invalid_code', attempts_remaining: 0 });
    await sb.advance(3_600_000);
    const third = await post('start', { phone_number: REVIEWER, method: 'sms' });
    expect(
      (await post('check', { verification_id: third.body.verification_id, code: CODE })).body.verified,
    ).toBe(true);
  });

  it("the owner allowlist: another owner's start is a real number's, sent to the API; the boot warning counts the numbers", async () => {
    await boot({ testNumbers: { ...TEST_NUMBERS, owners: ['reviewer'] } });
    const stranger = await post('start', { phone_number: REVIEWER, method: 'sms' }, 'someone-else');
    expect(stranger.status).toBe(201);
    expect(stranger.body).not.toHaveProperty('reason');
    expect(sb.sessionsFor(REVIEWER)).toHaveLength(1);
    const before = sessionCalls();
    expect((await post('start', { phone_number: REVIEWER, method: 'sms' })).status).toBe(201);
    expect(sessionCalls()).toBe(before);
    const warning = logger.lines.find((line) => line.includes('option "testNumbers"'));
    expect(warning).toMatch(/^warn .*5 test number\(s\) enabled.*for 1 owner/);
    expect(warning).not.toContain(CODE);
  });

  it.each([
    ['absent', undefined],
    ['an empty list of numbers', { numbers: [] }],
  ])(
    'without test numbers (%s), a real bot start keeps nothing of test numbers in the store',
    async (_shape, testNumbers) => {
      const store = new MemoryStore({ clock: () => sb.now() });
      try {
        await boot({ store, testNumbers });
        const started = await post('start', { phone_number: '+79161230031', method: 'msgr2_bot' });
        expect(started.status).toBe(201);
        expect(String(started.body.deep_link)).toMatch(/^https:\/\//);
        expect(dumpMemoryStore(store).filter((line) => line.startsWith('test-number:'))).toEqual([]);
      } finally {
        await host?.close();
        host = undefined;
        await store.close();
      }
    },
  );

  it('an empty owner allowlist admits nobody: every owner’s start of a test number is a real one, sent to the API', async () => {
    // `owners: []` restricts to no one; it never means "no allowlist" (every owner).
    await boot({ testNumbers: { ...TEST_NUMBERS, owners: [] } });
    // The sandbox is shared by this file's tests: counted from what they left.
    const earlier = sb.sessionsFor(REVIEWER).length;
    for (const [n, user] of ['reviewer', 'someone-else'].entries()) {
      const started = await post('start', { phone_number: REVIEWER, method: 'sms' }, user);
      expect(started.status).toBe(201);
      expect(sb.sessionsFor(REVIEWER)).toHaveLength(earlier + n + 1);
      // The fixed code is no code for it: the API's session is checked, and refuses it.
      const checked = await post(
        'check',
        { verification_id: started.body.verification_id, code: CODE },
        user,
      );
      expect(checked.body).not.toMatchObject({ verified: true });
    }
    expect(sb.requestCount('POST /v1/verify')).toBe(2);
  });
});

describe('test numbers: options', () => {
  const boot = (testNumbers: unknown) =>
    Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        VerificationModule.forRoot({
          api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiSecret: 's'.repeat(32) },
          testNumbers: testNumbers as VerificationModuleOptions['testNumbers'],
        }),
      ],
    }).compile();

  it.each([
    [{ numbers: [{ phoneNumber: '+7999' + '*', code: '1234' }] }, 'testNumbers.numbers[0].phoneNumber'],
    [{ numbers: [{ phoneNumber: REVIEWER }] }, 'testNumbers.numbers[0].code'],
    [{ numbers: [{ phoneNumber: REVIEWER, code: '12' }] }, 'testNumbers.numbers[0].code'],
    [
      { numbers: [{ phoneNumber: REVIEWER, code: '1234', outcome: 'maybe' }] },
      'testNumbers.numbers[0].outcome',
    ],
    [
      {
        numbers: [
          { phoneNumber: REVIEWER, code: '1234' },
          { phoneNumber: REVIEWER, code: '5678' },
        ],
      },
      'testNumbers.numbers',
    ],
    [{ numbers: [], maxAttempts: 0 }, 'testNumbers.maxAttempts'],
  ])('a wrong testNumbers option stops the boot naming the field (%#)', async (testNumbers, field) => {
    const failure = boot(testNumbers);
    await expect(failure).rejects.toThrow(`option "${field}"`);
    await expect(failure).rejects.not.toThrow(/5678/);
  });
});

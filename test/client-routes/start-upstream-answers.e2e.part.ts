/**
 * What a caller and the operator see of a start the API did not answer with a session: a method the
 * account has not enabled (400 `method_not_available`, saying so, when the API says so; any other 400 of
 * the API is 503), the API's 429 (every start of the host held back for its Retry-After without asking the
 * API), and a start whose answer never came (a reset: the operator is warned that a session may exist
 * upstream; a refusal warns nothing of the kind). A start whose store failed before the API was asked is
 * 503 and keeps what it took.
 */
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { CapturingLogger } from '../support/log-capture.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import { lastEventOf, nextPhone, startHost } from '../webhooks/harness.js';

const start = (url: string, method: string, user: string, phone = nextPhone()) =>
  call(url, 'POST', '/verification/start', { phone_number: phone, method }, { 'x-user': user });

const answer = (res: Awaited<ReturnType<typeof call>>) => ({
  status: res.status,
  errorCode: res.body.error_code,
  reason: res.body.reason,
  detail: res.body.detail,
  retryAfter: res.headers.get('retry-after'),
});

describe.each(ONE_PLATFORM)('client routes: a start the API refused or left unanswered (%s)', (platform) => {
  // Only sms is enabled; another method is answered 400 `method_not_enabled`.
  const suite = sandboxSuite({ methodNotEnabled: 400, demoAccount: { enabledMethods: ['sms'] } });
  afterEach(() => suite.sb.clearFaults());

  it("a method the account has not enabled (the API's 400 method_not_enabled) is 400 method_not_available, saying so; the API's other 400 is 503", async () => {
    const sb = suite.sb;
    // flash_call offered explicitly, so that the start reaches the API.
    const host = await suite.boot(() =>
      startHost(platform, sb, {
        receiveWebhooks: false,
        module: { methods: ['sms', 'flash_call'], reconcile: { enabled: false } },
      }),
    );
    expect(answer(await start(host.url, 'flash_call', 'ann'))).toEqual({
      status: 400,
      errorCode: 'method_not_available',
      reason: undefined,
      detail: 'This method is not available for this account',
      retryAfter: null,
    });
    sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 400 });
    expect(answer(await start(host.url, 'sms', 'ann'))).toMatchObject({
      status: 503,
      errorCode: 'service_unavailable',
    });
    expect((await start(host.url, 'sms', 'ann')).status).toBe(201);
  });

  it("the API's 429 holds every start of the host for its Retry-After, asking the API nothing meanwhile", async () => {
    const sb = suite.sb;
    const host = await suite.boot(() =>
      startHost(platform, sb, {
        receiveWebhooks: false,
        module: { limits: { spendCap: false, pumping: false }, reconcile: { enabled: false } },
      }),
    );
    sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 429, retry_after_s: 7 });
    expect(answer(await start(host.url, 'sms', 'ann'))).toMatchObject({
      status: 429,
      errorCode: 'rate_limit_exceeded',
      retryAfter: '7',
    });
    sb.resetRequestCounts();
    await sb.advance(6_999);
    // Another caller, another number: held back by the API's own limit, not by a budget of theirs.
    expect(answer(await start(host.url, 'sms', 'bob'))).toMatchObject({
      status: 429,
      reason: 'upstream_rate_limit',
    });
    expect(sb.requestCount('POST /v1/verify')).toBe(0);
    await sb.advance(1);
    expect((await start(host.url, 'sms', 'bob')).status).toBe(201);
  });

  it('a start whose answer never came (a reset) warns the operator a session may exist upstream; a refused one does not', async () => {
    const sb = suite.sb;
    const logger = new CapturingLogger();
    const host = await suite.boot(() =>
      startHost(platform, sb, { logger, receiveWebhooks: false, module: { reconcile: { enabled: false } } }),
    );
    const inDoubt = () => logger.lines.filter((line) => line.includes('initiation outcome unknown'));
    sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 403 });
    expect((await start(host.url, 'sms', 'ann')).status).toBe(503);
    expect(inDoubt()).toEqual([]);
    sb.addFault({ route: 'POST /v1/verify', kind: 'reset' });
    expect((await start(host.url, 'sms', 'ann')).status).toBe(503);
    expect(inDoubt()).toEqual([
      expect.stringMatching(
        /^warn initiation outcome unknown: a session may exist upstream; it is adopted if a webhook reveals it method=sms phone=\+7\*+\d{4} /,
      ),
    ]);
  });

  it("a start's, a refused start's and a refused check's log lines give the time each took, in ms from its request (a check's names its session, not the number)", async () => {
    const sb = suite.sb;
    const logger = new CapturingLogger();
    const host = await suite.boot(() =>
      startHost(platform, sb, {
        logger,
        receiveWebhooks: false,
        module: { methods: ['sms', 'flash_call'], reconcile: { enabled: false } },
      }),
    );
    const before = Date.now();
    const started = await start(host.url, 'sms', 'ann');
    expect(started.status).toBe(201);
    expect((await start(host.url, 'flash_call', 'ann')).status).toBe(400);
    const check = await call(
      host.url,
      'POST',
      '/verification/check',
      { verification_id: started.body.verification_id, code: '0000' },
      { 'x-user': 'ann' },
    );
    expect(check.body.error_code).toBe('invalid_code');
    const took = Date.now() - before;
    const lines = logger.lines.filter((line) => / route=(start|check) /.test(line));
    expect(lines.map((line) => /^\w+ ([\w ]+?) route=/.exec(line)?.[1])).toEqual([
      'start',
      'start refused',
      'check refused',
    ]);
    for (const line of lines) {
      const latency = Number(/ latency_ms=(\d+)/.exec(line)?.[1]);
      expect(latency).toBeGreaterThanOrEqual(0);
      expect(latency).toBeLessThanOrEqual(took);
    }
    // A check's line names its session, not the number.
    expect(lines[2]).toMatch(/ request_id=\S+ /);
    expect(lines[2]).not.toMatch(/ phone=/);
  });

  it('a start whose store failed before paying (its erasure index not reserved) is 503, the API not asked, and keeps what it took: the number’s next start is refused', async () => {
    const sb = suite.sb;
    const store = new MemoryStore({ clock: () => sb.now() });
    // The store fails once the batch that reserves the start's erasure index (it reads the subjects'
    // erasure marks): the admission's other writes went through.
    let failReservation = true;
    const batch = store.batch.bind(store);
    store.batch = (operations) => {
      if (failReservation && operations.some((o) => o.op === 'get' && o.key.endsWith(':forgotten'))) {
        failReservation = false;
        return Promise.reject(new Error('store down'));
      }
      return batch(operations);
    };
    try {
      const host = await suite.boot(() =>
        startHost(platform, sb, {
          receiveWebhooks: false,
          module: {
            store,
            limits: {
              resendCooldownMs: false,
              startPerPhoneAndCaller: false,
              startPerPhone: { points: 1, windowMs: 3_600_000 },
              spendCap: false,
              pumping: false,
            },
            reconcile: { enabled: false },
          },
        }),
      );
      const phone = nextPhone();
      const startOf = (user: string) => start(host.url, 'sms', user, phone);
      const sent = sb.requestCount('POST /v1/verify');
      expect(answer(await startOf('ann'))).toMatchObject({ status: 503, errorCode: 'service_unavailable' });
      expect(failReservation).toBe(false);
      expect(answer(await startOf('bob'))).toMatchObject({ status: 429, reason: 'start_phone_limit' });
      expect(sb.requestCount('POST /v1/verify')).toBe(sent);
    } finally {
      await suite.host?.close();
      await store.close();
    }
  });

  it('an identical start waiting on one whose store failed before paying is answered as it is: 503, the API not asked, and its log line names the failure', async () => {
    const sb = suite.sb;
    const store = new MemoryStore({ clock: () => sb.now() });
    // The first start's reservation fails once its twin has reached the host and had time to wait on the first
    // start's flight (its reading and its claim are in-process on a MemoryStore).
    let twinRead!: () => void;
    const twinHasRead = new Promise<void>((resolve) => (twinRead = resolve));
    let reservations = 0;
    const batch = store.batch.bind(store);
    store.batch = async (operations) => {
      if (operations.some((o) => o.op === 'get' && o.key.endsWith(':forgotten')) && reservations++ === 0) {
        await twinHasRead;
        for (let i = 0; i < 50; i++) await new Promise<void>((resolve) => setImmediate(resolve));
        throw new Error('store down');
      }
      return batch(operations);
    };
    const logger = new CapturingLogger();
    try {
      const host = await suite.boot(() =>
        startHost(platform, sb, {
          logger,
          receiveWebhooks: false,
          module: { store, limits: { spendCap: false, pumping: false }, reconcile: { enabled: false } },
        }),
      );
      let starts = 0;
      (host.app.getHttpServer() as Server).on('request', () => {
        if ((starts += 1) === 2) twinRead();
      });
      const phone = nextPhone();
      const sent = sb.requestCount('POST /v1/verify');
      const [first, twin] = await Promise.all([
        start(host.url, 'sms', 'ann', phone),
        start(host.url, 'sms', 'ann', phone),
      ]);
      expect(answer(first)).toMatchObject({ status: 503, errorCode: 'service_unavailable' });
      expect(answer(twin)).toMatchObject({ status: 503, errorCode: 'service_unavailable' });
      expect(reservations).toBe(1);
      expect(sb.requestCount('POST /v1/verify')).toBe(sent);
      // The operator is told why each failed, the twin too: the store's failure, not an empty cause.
      expect(logger.lines.filter((line) => line.includes('start failed'))).toEqual([
        expect.stringMatching(/^error start failed route=start method=sms .* error="Error: store down" /),
        expect.stringMatching(/^error start failed route=start method=sms .* error="Error: store down" /),
      ]);
    } finally {
      await suite.host?.close();
      await store.close();
    }
  });

  /** A start of `phone` by ann whose 201 the API answers naming another number (`named`). */
  async function startAnswerNamingAnother() {
    const sb = suite.sb;
    const host = await suite.boot(() =>
      startHost(platform, sb, { receiveWebhooks: false, module: { reconcile: { enabled: false } } }),
    );
    const [phone, named] = [nextPhone(), nextPhone()];
    sb.addFault({ route: 'POST /v1/verify', kind: 'field', field: 'phone_number', value: named });
    const started = await start(host.url, 'sms', 'ann', phone);
    expect(started.status).toBe(201);
    return { sb, host, phone, named, started };
  }

  it('an answer naming another number than the one asked for: the event and the verified phone the host reads keep the number the person entered, the one the API sends the code to', async () => {
    const { sb, host, phone, named, started } = await startAnswerNamingAnother();
    const [session] = sb.sessionsFor(phone);
    expect(sb.sessionsFor(named)).toEqual([]);
    await sb.deliver(session!.request_id);
    const checked = await call(
      host.url,
      'POST',
      '/verification/check',
      {
        verification_id: started.body.verification_id,
        code: String(sb.getSession(session!.request_id)!.code),
      },
      { 'x-user': 'ann' },
    );
    expect(checked.body.status).toBe('verified');
    expect(lastEventOf(host, session!.request_id)).toMatchObject({
      event: 'verification.verified',
      phoneNumber: phone,
    });
    const verified = host.app.get(VerificationService, { strict: false });
    expect(await verified.getVerifiedPhone(String(started.body.verification_id), 'ann')).toBe(phone);
  });

  it('an answer naming another number than the one asked for: erasing the number entered removes its session, whose handle then answers 404', async () => {
    const { host, phone, started } = await startAnswerNamingAnother();
    const erasure = host.app.get(VerificationErasure, { strict: false });
    expect(await erasure.forget({ phoneNumber: phone })).toMatchObject({ sessions: 1, liveSessions: 1 });
    const status = await call(
      host.url,
      'GET',
      `/verification/status/${String(started.body.verification_id)}`,
      undefined,
      { 'x-user': 'ann' },
    );
    expect(status.status).toBe(404);
  });

  // The initiate response marks `method` as its only required field (upstream-api-spec.md): an answer without
  // `phone_number` is the API's, and the start records the number it asked for, never the answer's, anyway.
  it('an answer without phone_number (only method is required) starts the session for the number entered', async () => {
    const sb = suite.sb;
    const host = await suite.boot(() =>
      startHost(platform, sb, { receiveWebhooks: false, module: { reconcile: { enabled: false } } }),
    );
    const phone = nextPhone();
    sb.addFault({ route: 'POST /v1/verify', kind: 'field', field: 'phone_number', value: undefined });
    const started = await start(host.url, 'sms', 'ann', phone);
    expect({ status: started.status, phone: started.body.phone_number }).toEqual({ status: 201, phone });
    expect(sb.sessionsFor(phone)).toHaveLength(1);
  });
});

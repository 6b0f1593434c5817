import { describe, expect, it, jest } from '@jest/globals';
import { VerificationClient, type VerificationState } from '../../src/client/index.js';
import { backoffMs } from '../../src/client/status-follower.js';
import { answer, canceled, clientHarness, journey, MemoryStorage, problem } from './fake-routes.js';

/** The client's state machine over a fake transport, on fake timers (no network, no waiting). */
describe('VerificationClient (state machine)', () => {
  const harness = clientHarness();
  const client = harness.client;

  const phases = (c: VerificationClient): string[] => {
    const seen: string[] = [];
    c.subscribe((s) => {
      if (seen.at(-1) !== s.phase) seen.push(s.phase);
    });
    return seen;
  };

  it('sms: idle → starting → awaiting_user (a 6-digit code) → verifying → verified; kept for a reload, then forgotten', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('POST /check', {
      status: 200,
      body: { verification_id: 'VID-1', status: 'verified', verified: true },
    });
    const c = client();
    const seen = phases(c);
    expect(c.getState().phase).toBe('idle');
    await c.start({ phoneNumber: '+7 912 345-67-89', method: 'sms' });
    expect(harness.routes.requests[0]!.body).toEqual({ phone_number: '+7 912 345-67-89', method: 'sms' });
    expect(harness.routes.requests[0]!.init.headers['content-type']).toBe('application/json');
    expect(c.getState()).toMatchObject({
      phase: 'awaiting_user',
      verificationId: 'VID-1',
      prompt: { kind: 'code', length: 6, minLength: 6, maxLength: 6 },
      connection: 'polling',
    });
    expect(JSON.parse(harness.storage.getItem('nestjs-phone-verification')!)).toEqual({
      id: 'VID-1',
      method: 'sms',
      phone: '+79123456789',
    });
    await c.check('123 456');
    expect(harness.routes.requests.at(-1)!.body).toEqual({ verification_id: 'VID-1', code: '123456' });
    expect(seen).toEqual(['starting', 'awaiting_user', 'verifying', 'verified']);
    expect(harness.storage.items.size).toBe(0);
    // Finished: no more status polls.
    await jest.advanceTimersByTimeAsync(10_000);
    expect(harness.routes.count('GET /status')).toBe(0);
  });

  it('a graded answer (409 method_held) is followed by itself: the start goes on with the first method offered, once', async () => {
    harness.routes.on(
      'POST /start',
      problem(409, 'method_held', {
        offered_methods: ['reverse_flash_call', 'msgr2_bot'],
        held: 'range_held',
      }),
      {
        status: 201,
        body: answer(harness.routes, {
          method: 'reverse_flash_call',
          number_to_call: '+78005553535',
          code_length: undefined,
        }),
      },
    );
    const c = client();
    await c.start({ phoneNumber: '+7 912 345-67-89', method: 'sms' });
    expect(harness.routes.requests.map((r) => (r.body as { method?: string }).method)).toEqual([
      'sms',
      'reverse_flash_call',
    ]);
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', method: 'reverse_flash_call', error: null });
  });

  it('a graded answer offering nothing new is the error it is', async () => {
    harness.routes.on(
      'POST /start',
      problem(409, 'method_held', { offered_methods: ['reverse_flash_call'] }),
      problem(409, 'method_held', { offered_methods: ['reverse_flash_call'] }),
    );
    const c = client();
    await c.start({ phoneNumber: '+7 912 345-67-89', method: 'sms' });
    expect(harness.routes.count('POST /start')).toBe(2);
    expect(c.getState().error?.code).toBe('method_held');
  });

  it.each([
    ['names no method', {}],
    ['names a first method that is no name', { offered_methods: [42, 'reverse_flash_call'] }],
    ['names first the method just asked for', { offered_methods: ['sms', 'reverse_flash_call'] }],
  ])('a graded answer that %s is the error it is, and the start is sent once', async (_, offered) => {
    harness.routes.on('POST /start', problem(409, 'method_held', offered), {
      status: 201,
      body: answer(harness.routes),
    });
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(harness.routes.count('POST /start')).toBe(1);
    expect(c.getState()).toMatchObject({ phase: 'idle', error: { code: 'method_held', status: 409 } });
  });

  it('a refusal other than method_held is the error it is, though it names offered methods: the start is sent once', async () => {
    harness.routes.on(
      'POST /start',
      problem(403, 'start_refused', { offered_methods: ['reverse_flash_call'] }),
      {
        status: 201,
        body: answer(harness.routes, { method: 'reverse_flash_call' }),
      },
    );
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(harness.routes.count('POST /start')).toBe(1);
    expect(c.getState()).toMatchObject({ phase: 'idle', error: { code: 'start_refused', status: 403 } });
  });

  it('polls status at poll_interval_ms and ends at a terminal status (expired, failed)', async () => {
    harness.routes.on('POST /start', {
      status: 201,
      body: answer(harness.routes, { poll_interval_ms: 1000 }),
    });
    harness.routes.on(
      'GET /status',
      { status: 200, body: answer(harness.routes) },
      { status: 200, body: answer(harness.routes, { status: 'expired' }) },
    );
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(999);
    expect(harness.routes.count('GET /status')).toBe(0);
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(1);
    await jest.advanceTimersByTimeAsync(2500);
    expect(c.getState()).toMatchObject({ phase: 'expired', prompt: null, connection: null });
    await jest.advanceTimersByTimeAsync(20_000);
    expect(harness.routes.count('GET /status')).toBe(2);

    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes, { status: 'failed' }) });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState().phase).toBe('failed');
  });

  it('each method has its task: a tel: link, a deep link, an operator push then its SMS fallback (4 to 8 digits)', async () => {
    const c = client();
    harness.routes.on('POST /start', {
      status: 201,
      body: answer(harness.routes, {
        method: 'reverse_flash_call',
        awaiting_code: false,
        code_length: 4,
        number_to_call: '+78005551234',
      }),
    });
    await c.start({ phoneNumber: '+79123456789', method: 'reverse_flash_call' });
    expect(c.getState().prompt).toEqual({
      kind: 'call',
      numberToCall: '+78005551234',
      telHref: 'tel:+78005551234',
    });

    harness.freshRoutes();
    const bot = client();
    harness.routes.on('POST /start', {
      status: 201,
      body: answer(harness.routes, {
        method: 'msgr2_bot',
        awaiting_code: false,
        deep_link: 'https://m2.example/bot?start=x',
      }),
    });
    harness.routes.on('GET /status', {
      status: 200,
      body: answer(harness.routes, { method: 'msgr2_bot', deep_link: 'https://m2.example/bot?start=x' }),
    });
    await bot.start({ phoneNumber: '+79123456789', method: 'msgr2_bot' });
    expect(bot.getState().prompt).toEqual({ kind: 'link', deepLink: 'https://m2.example/bot?start=x' });
    await jest.advanceTimersByTimeAsync(2500);
    expect(bot.getState().prompt).toMatchObject({ kind: 'code', length: 6 });

    harness.freshRoutes();
    const operator = client();
    const pending = { method: 'operator_id', awaiting_code: false, code_length: undefined };
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes, pending) });
    harness.routes.on(
      'GET /status',
      {
        status: 200,
        body: answer(harness.routes, {
          ...pending,
          awaiting_code: true,
          code_length_min: 4,
          code_length_max: 8,
        }),
      },
      {
        status: 200,
        body: answer(harness.routes, {
          ...pending,
          awaiting_code: true,
          code_length_min: 4,
          code_length_max: 8,
        }),
      },
      // The code accepted, the session awaits no code any more: still the operator's verdict to wait for.
      { status: 200, body: answer(harness.routes, pending) },
      { status: 200, body: answer(harness.routes, { ...pending, status: 'verified' }) },
    );
    harness.routes.on('POST /check', {
      status: 200,
      body: { verification_id: 'VID-1', status: 'sent', verified: false },
    });
    await operator.start({ phoneNumber: '+79123456789', method: 'operator_id' });
    expect(operator.getState()).toMatchObject({ phase: 'awaiting_user', prompt: { kind: 'push' } });
    await jest.advanceTimersByTimeAsync(2500);
    expect(operator.getState().prompt).toEqual({ kind: 'code', length: null, minLength: 4, maxLength: 8 });
    await operator.check('12345');
    // Accepted, not yet verified: the operator's verdict follows by status.
    expect(operator.getState()).toMatchObject({ phase: 'verifying', prompt: null });
    await jest.advanceTimersByTimeAsync(2500);
    expect(operator.getState()).toMatchObject({ phase: 'verifying', prompt: null });
    await jest.advanceTimersByTimeAsync(2500);
    expect(operator.getState()).toMatchObject({ phase: 'verifying', prompt: null });
    await jest.advanceTimersByTimeAsync(2500);
    expect(operator.getState().phase).toBe('verified');
  });

  it('a wrong code: attempts_remaining and a typed error; none left, the server says failed', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on(
      'POST /check',
      problem(400, 'invalid_code', { attempts_remaining: 1 }),
      problem(400, 'invalid_code', { attempts_remaining: 0 }),
    );
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'failed' }) });
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await c.check('000000');
    const state = c.getState();
    expect(state).toMatchObject({ phase: 'awaiting_user', attemptsRemaining: 1 });
    expect(state.error).toMatchObject({
      name: 'VerificationClientError',
      code: 'invalid_code',
      status: 400,
      attemptsRemaining: 1,
    });
    expect(state.error?.problem.detail).toBe('invalid_code');
    await c.check('000000');
    expect(c.getState()).toMatchObject({
      phase: 'failed',
      attemptsRemaining: 0,
      error: { code: 'invalid_code' },
    });
    await jest.advanceTimersByTimeAsync(10_000);
    expect(harness.routes.count('GET /status')).toBe(0);
  });

  it('a wrong code with attempts left reads no status out of turn: the next read comes at poll_interval_ms', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('POST /check', problem(400, 'invalid_code', { attempts_remaining: 2 }));
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes) });
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(1000);
    await c.check('000000');
    await jest.advanceTimersByTimeAsync(1499);
    expect(harness.routes.count('GET /status')).toBe(0);
    expect(c.getState()).toMatchObject({
      phase: 'awaiting_user',
      attemptsRemaining: 2,
      error: { code: 'invalid_code' },
    });
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(1);
  });

  it('countdowns run on the server clock (Date header), whatever the device clock says', async () => {
    harness.routes.offsetMs = 3_600_000; // the device is an hour behind
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({ expiresInMs: 300_000, resendInMs: 60_000, canResend: false });
    await jest.advanceTimersByTimeAsync(1000);
    expect(c.getState()).toMatchObject({ expiresInMs: 299_000, resendInMs: 59_000 });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes) });
    await jest.advanceTimersByTimeAsync(59_000);
    expect(c.getState()).toMatchObject({ resendInMs: 0, canResend: true });
    // resend: the same number and method again.
    harness.routes.on('POST /start', {
      status: 201,
      body: answer(harness.routes, { verification_id: 'VID-2' }),
    });
    await c.resend();
    expect(harness.routes.requests.filter((r) => r.route === 'POST /start').at(-1)!.body).toEqual({
      phone_number: '+79123456789',
      method: 'sms',
    });
    expect(c.getState()).toMatchObject({ verificationId: 'VID-2', canResend: false });
  });

  it('a resend before its time is refused locally (no request)', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await c.resend();
    expect(c.getState().error?.code).toBe('resend_unavailable');
    expect(harness.routes.count('POST /start')).toBe(1);
  });

  it('the expiry passing with no word from the server ends in expired', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes, {}, 10) });
    harness.routes.on('GET /status', { status: 503, body: {} });
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(14_000);
    expect(c.getState().phase).toBe('awaiting_user');
    await jest.advanceTimersByTimeAsync(1_500);
    expect(c.getState().phase).toBe('expired');
  });

  it('Retry-After is honoured: the wait counts down, calls during it send nothing, then it clears', async () => {
    const fresh = harness.routes;
    fresh.on(
      'POST /start',
      { ...problem(429, 'rate_limit_exceeded'), headers: { 'Retry-After': '30' } },
      { status: 201, body: answer(fresh) },
    );
    const limited = client();
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(limited.getState()).toMatchObject({ phase: 'idle', retryInMs: 30_000 });
    expect(limited.getState().error).toMatchObject({
      code: 'rate_limit_exceeded',
      status: 429,
      retryAfterMs: 30_000,
    });
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(fresh.count('POST /start')).toBe(1);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(limited.getState().retryInMs).toBe(20_000);
    await jest.advanceTimersByTimeAsync(20_000);
    expect(limited.getState()).toMatchObject({ error: null, retryInMs: null });
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(limited.getState().phase).toBe('awaiting_user');
  });

  it('Retry-After as an HTTP date (a proxy in front) counts down to it on the server clock; one that is neither a date nor seconds holds nothing', async () => {
    const fresh = harness.routes;
    const until = new Date(fresh.serverNow() + 45_000).toUTCString();
    const waitMs = Date.parse(until) - fresh.serverNow();
    fresh.on(
      'POST /start',
      { ...problem(429, 'rate_limit_exceeded'), headers: { 'Retry-After': until } },
      { ...problem(429, 'rate_limit_exceeded'), headers: { 'Retry-After': 'soon' } },
      { status: 201, body: answer(fresh) },
    );
    const limited = client();
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(waitMs).toBeGreaterThan(40_000);
    expect(limited.getState()).toMatchObject({ phase: 'idle', retryInMs: waitMs });
    expect(limited.getState().error).toMatchObject({ status: 429, retryAfterMs: waitMs });
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(fresh.count('POST /start')).toBe(1);
    await jest.advanceTimersByTimeAsync(waitMs);
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(fresh.count('POST /start')).toBe(2);
    expect(limited.getState()).toMatchObject({ phase: 'idle', retryInMs: null });
    expect(limited.getState().error).toMatchObject({ status: 429, retryAfterMs: null, retryUntil: null });
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(fresh.count('POST /start')).toBe(3);
    expect(limited.getState().phase).toBe('awaiting_user');
  });

  it.each(['1.5', '120abc', '1e3', '-5'])(
    'Retry-After: %s (neither whole seconds nor a date) holds nothing: the next start goes out at once',
    async (value) => {
      harness.routes.on(
        'POST /start',
        { ...problem(429, 'rate_limit_exceeded'), headers: { 'Retry-After': value } },
        { status: 201, body: answer(harness.routes) },
      );
      const limited = client();
      await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
      expect(limited.getState().retryInMs).toBeNull();
      await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
      expect(harness.routes.count('POST /start')).toBe(2);
      expect(limited.getState().phase).toBe('awaiting_user');
    },
  );

  it("Retry-After with spaces around its seconds (a host's own fetch that hands the header as sent) waits them", async () => {
    harness.routes.on(
      'POST /start',
      { ...problem(429, 'rate_limit_exceeded'), headers: { 'Retry-After': ' 30 ' } },
      { status: 201, body: answer(harness.routes) },
    );
    const limited = client();
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(limited.getState()).toMatchObject({ retryInMs: 30_000, error: { retryAfterMs: 30_000 } });
  });

  it("a refusal's message is the server's detail (what a host may show), its code the error_code", async () => {
    harness.routes.on(
      'POST /start',
      problem(400, 'phone_not_allowed', { detail: 'Numbers of this country are not accepted here' }),
    );
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState().error).toMatchObject({
      code: 'phone_not_allowed',
      status: 400,
      message: 'Numbers of this country are not accepted here',
    });
  });

  it("Retry-After's end on a tab whose timers were held (no tick since the 429): one ms before it a start sends nothing, at it the start goes out", async () => {
    const fresh = harness.routes;
    fresh.on(
      'POST /start',
      { ...problem(429, 'rate_limit_exceeded'), headers: { 'Retry-After': '30' } },
      { status: 201, body: answer(fresh) },
    );
    const limited = client();
    const refusedAt = Date.now();
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(limited.getState().error).toMatchObject({ status: 429, retryAfterMs: 30_000 });
    // The clock moves while no timer runs (a background tab, a sleeping device): the state is as the 429 left it.
    jest.setSystemTime(refusedAt + 29_999);
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(fresh.count('POST /start')).toBe(1);
    jest.setSystemTime(refusedAt + 30_000);
    await limited.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(fresh.count('POST /start')).toBe(2);
    expect(limited.getState().phase).toBe('awaiting_user');
  });

  it('a 503 on start is not retried (a POST may have reached the API); a 503 on status backs off with jitter', async () => {
    harness.routes.on('POST /start', problem(503, 'service_unavailable'), {
      status: 201,
      body: answer(harness.routes, { poll_interval_ms: 1000 }),
    });
    harness.routes.on(
      'GET /status',
      problem(503, 'service_unavailable'),
      problem(503, 'service_unavailable'),
      {
        status: 200,
        body: answer(harness.routes),
      },
    );
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({
      phase: 'idle',
      error: { code: 'service_unavailable', status: 503 },
    });
    expect(harness.routes.count('POST /start')).toBe(1);
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(1000); // first poll: 503
    expect(harness.routes.count('GET /status')).toBe(1);
    // random() = 0: half of min(30 s, max(1 s, interval) · 2^(n-1)).
    await jest.advanceTimersByTimeAsync(499);
    expect(harness.routes.count('GET /status')).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(2);
    await jest.advanceTimersByTimeAsync(999);
    expect(harness.routes.count('GET /status')).toBe(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(3);
    expect(backoffMs(10, 2500, () => 1)).toBe(30_000);
    expect(backoffMs(1, 2500, () => 0.5)).toBe(1875);
  });

  it("a 503's Retry-After paces only the automatic reads: the person may start again at once, nothing counts down", async () => {
    harness.routes.on(
      'POST /start',
      { ...problem(503, 'service_unavailable'), headers: { 'Retry-After': '30' } },
      { status: 201, body: answer(harness.routes) },
    );
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({
      phase: 'idle',
      error: { code: 'service_unavailable', status: 503 },
      retryInMs: null,
    });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(harness.routes.count('POST /start')).toBe(2);
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', error: null });
  });

  it('a 429 on a status poll waits its Retry-After', async () => {
    harness.routes.on('POST /start', {
      status: 201,
      body: answer(harness.routes, { poll_interval_ms: 1000 }),
    });
    harness.routes.on(
      'GET /status',
      { ...problem(429, 'rate_limit_exceeded'), headers: { 'retry-after': '7' } },
      { status: 200, body: answer(harness.routes) },
    );
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(1000);
    await jest.advanceTimersByTimeAsync(6999);
    expect(harness.routes.count('GET /status')).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(2);
  });

  it('a status read that succeeds ends the backoff: the next 503, however many came before, waits as a first one does', async () => {
    const pending = { status: 200, body: answer(harness.routes, { poll_interval_ms: 1000 }) };
    harness.routes.on('POST /start', { ...pending, status: 201 });
    harness.routes.on(
      'GET /status',
      problem(503, 'service_unavailable'),
      problem(503, 'service_unavailable'),
      pending,
      problem(503, 'service_unavailable'),
      pending,
    );
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(1000); // 503
    await jest.advanceTimersByTimeAsync(500); // 503, the second in a row: the wait doubles
    await jest.advanceTimersByTimeAsync(1000); // answered: the outage is over
    await jest.advanceTimersByTimeAsync(1000); // 503 again: a first failure since the answer
    expect(harness.routes.count('GET /status')).toBe(4);
    // random() = 0: half of max(1 s, interval), as after the very first failure; not 1 s or 2 s.
    await jest.advanceTimersByTimeAsync(499);
    expect(harness.routes.count('GET /status')).toBe(4);
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(5);
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', error: null });
  });

  it('resumes after a reload from the storage: the status route says where it is', async () => {
    harness.storage.setItem(
      'nestjs-phone-verification',
      JSON.stringify({ id: 'VID-9', method: 'msgr2_bot', phone: '+79123456789' }),
    );
    harness.routes.on('GET /status', {
      status: 200,
      body: answer(harness.routes, {
        verification_id: 'VID-9',
        method: 'msgr2_bot',
        awaiting_code: false,
        deep_link: 'https://m2.example/b?start=t',
        phone_number: '+7******6789',
      }),
    });
    const c = client();
    await expect(c.resume()).resolves.toBe(true);
    expect(harness.routes.requests[0]!.route).toBe('GET /status');
    expect(c.getState()).toMatchObject({
      phase: 'awaiting_user',
      resumed: true,
      verificationId: 'VID-9',
      // The number kept from the start (the status route gives it masked).
      phoneNumber: '+79123456789',
      prompt: { kind: 'link' },
    });

    // Nothing saved: nothing to resume.
    await expect(client({ storage: new MemoryStorage() }).resume()).resolves.toBe(false);
  });

  it('a handle the server no longer knows is forgotten on resume', async () => {
    harness.storage.setItem(
      'nestjs-phone-verification',
      JSON.stringify({ id: 'gone', method: 'sms', phone: '' }),
    );
    harness.routes.on('GET /status', problem(404, 'not_found'));
    const c = client();
    await expect(c.resume()).resolves.toBe(false);
    expect(c.getState()).toMatchObject({ phase: 'idle', error: { code: 'not_found' } });
    expect(harness.storage.items.size).toBe(0);
  });

  it('cancel aborts what is in flight, stops following, forgets, and cancels on the server', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('POST /cancel', canceled());
    const c = client();
    const starting = c.start({ phoneNumber: '+79123456789', method: 'sms' });
    // No handle yet: nothing to cancel on the server.
    await c.cancel();
    await starting;
    expect(harness.routes.requests[0]!.init.signal.aborted).toBe(true);
    expect(c.getState().phase).toBe('canceled');
    expect(harness.routes.count('POST /cancel')).toBe(0);
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(harness.storage.items.size).toBe(1);
    const canceling = c.cancel();
    // Stopped here at once, before the server answers.
    expect(c.getState()).toMatchObject({ phase: 'canceled', verificationId: null, method: 'sms' });
    expect(harness.storage.items.size).toBe(0);
    await expect(canceling).resolves.toMatchObject({ phase: 'canceled', error: null });
    expect(harness.routes.requests.at(-1)).toMatchObject({
      route: 'POST /cancel',
      body: { verification_id: 'VID-1' },
    });
    await jest.advanceTimersByTimeAsync(10_000);
    expect(harness.routes.count('GET /status')).toBe(0);
  });

  it('a handle lost while following (404) fails the verification; a network failure is a typed error', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', problem(404, 'not_found'));
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(2500);
    expect(c.getState()).toMatchObject({ phase: 'failed', error: { code: 'not_found', status: 404 } });

    const offline = client({ fetch: () => Promise.reject(new TypeError('Failed to fetch')) });
    await offline.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(offline.getState()).toMatchObject({ phase: 'idle', error: { code: 'network_error', status: 0 } });
  });

  it('never sends a POST again by itself: a start, check, switch or cancel that met a network error (or a 503) is not retried', async () => {
    const posts: string[] = [];
    let failing = false;
    // Status reads go through the fake routes; POSTs fail once `failing` (the request may have reached the server).
    const fetchImpl: typeof harness.routes.fetch = (url, init) => {
      if (init.method === 'POST' && failing) {
        posts.push(url);
        return Promise.reject(new TypeError('Failed to fetch'));
      }
      return harness.routes.fetch(url, init);
    };
    failing = true;
    const c = client({ fetch: fetchImpl });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({ phase: 'idle', error: { code: 'network_error' } });
    await jest.advanceTimersByTimeAsync(120_000);
    expect(posts).toEqual(['/verification/start']);

    // Started: check, switch and cancel each fail once, and stay failed.
    failing = false;
    const first = answer(harness.routes, journey(harness.routes, ['sms'], ['flash_call'], 0));
    harness.routes.on('POST /start', { status: 201, body: { ...first, code_length: 4 } });
    harness.routes.on('GET /status', { status: 200, body: { ...first, code_length: 4 } });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    failing = true;
    await c.check('1234');
    await c.switchMethod();
    await jest.advanceTimersByTimeAsync(120_000);
    expect(posts).toEqual(['/verification/start', '/verification/check', '/verification/switch']);
    await c.cancel();
    await jest.advanceTimersByTimeAsync(120_000);
    expect(posts).toEqual([
      '/verification/start',
      '/verification/check',
      '/verification/switch',
      '/verification/cancel',
    ]);

    // A 503 answer to a start is not retried either (the API may have charged it).
    failing = false;
    harness.routes.on('POST /start', problem(503, 'service_unavailable'));
    const again = client({ fetch: fetchImpl });
    await again.start({ phoneNumber: '+79123456780', method: 'sms' });
    await jest.advanceTimersByTimeAsync(120_000);
    expect(harness.routes.count('POST /start')).toBe(2);
  });

  it('over the stream: the status is pushed, no polls while it is open, closed at the outcome', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    const c = client({ eventSource: harness.routes.eventSource });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    const stream = harness.routes.streams[0]!;
    expect(stream.url).toBe('/verification/status/VID-1/events');
    expect(c.getState().connection).toBe('stream');
    stream.push(answer(harness.routes, { status: 'delivered' }));
    expect(c.getState().status).toBe('delivered');
    // A dropped connection after the first message: EventSource reconnects by itself.
    stream.fail(0);
    await jest.advanceTimersByTimeAsync(30_000);
    expect(harness.routes.count('GET /status')).toBe(0);
    // An explicit refresh reads now and once more an interval later, and adds no polling.
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'delivered' }) });
    c.refresh();
    await jest.advanceTimersByTimeAsync(30_000);
    expect(harness.routes.count('GET /status')).toBe(2);
    stream.push(answer(harness.routes, { status: 'verified' }));
    expect(c.getState()).toMatchObject({ phase: 'verified', connection: null });
    expect(stream.closed).toBe(true);
  });

  it('falls back to polling when the stream fails before its first message (no route, too many streams)', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    const c = client({ eventSource: harness.routes.eventSource });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    harness.routes.streams[0]!.fail();
    expect(harness.routes.streams[0]!.closed).toBe(true);
    await jest.advanceTimersByTimeAsync(0);
    expect(harness.routes.count('GET /status')).toBe(1);
    expect(c.getState().phase).toBe('verified');
  });

  it('WebOTP: the code offered by the browser is checked; the request is aborted when code entry ends', async () => {
    const signals: AbortSignal[] = [];
    let offer: (credential: { code: string }) => void = () => undefined;
    const globals = globalThis as Record<string, unknown>;
    globals.OTPCredential = class {};
    Object.defineProperty(globalThis, 'navigator', {
      configurable: true,
      value: {
        credentials: {
          get: (options: { otp: unknown; signal: AbortSignal }) => {
            expect(options.otp).toEqual({ transport: ['sms'] });
            signals.push(options.signal);
            return new Promise((resolve) => (offer = resolve));
          },
        },
      },
    });
    try {
      harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
      harness.routes.on('POST /check', {
        status: 200,
        body: { verification_id: 'VID-1', status: 'verified', verified: true },
      });
      const c = client({ webOtp: true });
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      expect(signals).toHaveLength(1);
      offer({ code: '424242' });
      await jest.advanceTimersByTimeAsync(0);
      expect(harness.routes.requests.at(-1)).toMatchObject({
        route: 'POST /check',
        body: { code: '424242' },
      });
      expect(c.getState().phase).toBe('verified');
      expect(signals[0]!.aborted).toBe(true);
    } finally {
      delete globals.OTPCredential;
      Reflect.deleteProperty(globalThis, 'navigator');
    }
  });

  it('subscribers see each state once per change, and a check with no code awaited is refused locally', async () => {
    const c = client();
    const states: VerificationState[] = [];
    const unsubscribe = c.subscribe((s) => states.push(s));
    await c.check('123456');
    expect(states.at(-1)!.error?.code).toBe('no_verification');
    expect(harness.routes.requests).toHaveLength(0);
    unsubscribe();
    await c.check('123456');
    expect(states).toHaveLength(1);
  });
});

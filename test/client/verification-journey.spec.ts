import { describe, expect, it, jest } from '@jest/globals';
import { detectDevice, type VerificationClient } from '../../src/client/index.js';
import { answer, canceled, clientHarness, journey, problem } from './fake-routes.js';

const RFC = { awaiting_code: false, code_length: 4, number_to_call: '+78005551234' };

/** Journeys in the client (issue 18): auto start, switching, fallback timing and a server-side cancel. */
describe('VerificationClient (journeys)', () => {
  const harness = clientHarness();
  const client = harness.client;

  /** An auto start that the server answers with a reverse flash call, fallback in `fallbackInS`. */
  async function startedOnReverseCall(c: VerificationClient, fallbackInS = 45): Promise<void> {
    const first = answer(harness.routes, {
      ...RFC,
      ...journey(harness.routes, ['reverse_flash_call'], ['flash_call', 'sms'], fallbackInS),
    });
    harness.routes.on('POST /start', { status: 201, body: first });
    harness.routes.on('GET /status', { status: 200, body: first });
    await c.start({ phoneNumber: '+79123456789', method: 'auto', device: 'desktop' });
  }

  it('auto start with a device hint; "try another way" comes at fallback_available_at, on the server clock', async () => {
    harness.routes.offsetMs = 3_600_000; // the device is an hour behind
    const c = client();
    await startedOnReverseCall(c);
    expect(harness.routes.requests[0]!.body).toEqual({
      phone_number: '+79123456789',
      method: 'auto',
      device: 'desktop',
    });
    expect(c.getState()).toMatchObject({
      phase: 'awaiting_user',
      method: 'reverse_flash_call',
      prompt: { kind: 'call' },
      methodsTried: ['reverse_flash_call'],
      switchMethods: ['flash_call', 'sms'],
      fallbackInMs: 45_000,
      canSwitch: false,
    });
    await jest.advanceTimersByTimeAsync(44_000);
    expect(c.getState()).toMatchObject({ fallbackInMs: 1000, canSwitch: false });
    await jest.advanceTimersByTimeAsync(1000);
    expect(c.getState()).toMatchObject({ fallbackInMs: 0, canSwitch: true });
    // A call the user places takes no code: a code typed meanwhile is refused here, never sent.
    await c.check('1234');
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', error: { code: 'no_verification' } });
    expect(harness.routes.count('POST /check')).toBe(0);

    // No method and no device: neither is sent (the server's policy picks).
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    await c.start({ phoneNumber: '+79123456789' });
    expect(harness.routes.requests.at(-1)!.body).toEqual({ phone_number: '+79123456789' });
    // A purpose is sent as given.
    await c.start({ phoneNumber: '+79123456789', purpose: 'step_up' });
    expect(harness.routes.requests.at(-1)!.body).toEqual({
      phone_number: '+79123456789',
      purpose: 'step_up',
    });
  });

  it("switchMethod: POST /switch, then the new method's task for the same verification", async () => {
    const c = client();
    await startedOnReverseCall(c, 0);
    expect(c.getState().canSwitch).toBe(true);
    const next = answer(
      harness.routes,
      journey(harness.routes, ['reverse_flash_call', 'flash_call'], ['sms'], 30),
    );
    harness.routes.on('POST /switch', {
      status: 201,
      body: { ...next, code_length: 4, resend_available_at: null },
    });
    harness.routes.on('GET /status', { status: 200, body: { ...next, code_length: 4 } });
    const polls = harness.routes.count('GET /status');
    await c.switchMethod();
    expect(harness.routes.requests.at(-1)).toMatchObject({
      route: 'POST /switch',
      body: { verification_id: 'VID-1' },
    });
    expect(c.getState()).toMatchObject({
      phase: 'awaiting_user',
      verificationId: 'VID-1',
      method: 'flash_call',
      prompt: { kind: 'code', length: 4 },
      methodsTried: ['reverse_flash_call', 'flash_call'],
      switchMethods: ['sms'],
      fallbackInMs: 30_000,
      canSwitch: false,
      resendAvailableAt: null,
    });
    // A reload resumes the new method; a resend would resend it.
    expect(JSON.parse(harness.storage.getItem('nestjs-phone-verification')!)).toMatchObject({
      id: 'VID-1',
      method: 'flash_call',
    });
    // One follower: the old one stopped, the new one polls at the new answer's interval.
    await jest.advanceTimersByTimeAsync(2500);
    expect(harness.routes.count('GET /status')).toBe(polls + 1);

    // A named method is sent as asked.
    harness.routes.on('POST /switch', {
      status: 201,
      body: answer(
        harness.routes,
        journey(harness.routes, ['reverse_flash_call', 'flash_call', 'sms'], [], null),
      ),
    });
    await c.switchMethod('sms');
    expect(harness.routes.requests.at(-1)!.body).toEqual({ verification_id: 'VID-1', method: 'sms' });
    expect(c.getState()).toMatchObject({ method: 'sms', switchMethods: [], fallbackInMs: null });
  });

  it('autoFallback: switches by itself when fallbackInMs reaches 0, once per step; without it, never', async () => {
    const c = client({ autoFallback: true });
    await startedOnReverseCall(c, 20);
    const next = answer(
      harness.routes,
      journey(harness.routes, ['reverse_flash_call', 'flash_call'], ['sms'], 30),
    );
    harness.routes.on('POST /switch', {
      status: 201,
      body: { ...next, code_length: 4, resend_available_at: null },
    });
    await jest.advanceTimersByTimeAsync(19_000);
    expect(harness.routes.count('POST /switch')).toBe(0);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(harness.routes.count('POST /switch')).toBe(1);
    harness.routes.on('GET /status', { status: 200, body: { ...next, code_length: 4 } });
    expect(c.getState()).toMatchObject({ method: 'flash_call', fallbackInMs: 10_000, canSwitch: false });
    // The next step's moment (30 s after the answer was made): one more switch; a refused one is not retried.
    harness.routes.on('POST /switch', problem(409, 'journey_limit_reached', { limit: 'max_steps' }));
    await jest.advanceTimersByTimeAsync(30_000);
    expect(harness.routes.count('POST /switch')).toBe(2);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(harness.routes.count('POST /switch')).toBe(2);

    c.dispose();
    const manual = client();
    await startedOnReverseCall(manual, 0);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(manual.getState().canSwitch).toBe(true);
    expect(harness.routes.count('POST /switch')).toBe(2);
  });

  it('a second switchMethod while one is under way sends nothing more', async () => {
    const c = client();
    await startedOnReverseCall(c, 0);
    harness.routes.on('POST /switch', {
      status: 201,
      body: answer(
        harness.routes,
        journey(harness.routes, ['reverse_flash_call', 'flash_call'], ['sms'], 30),
      ),
    });
    const [a, b] = await Promise.all([c.switchMethod(), c.switchMethod()]);
    expect(harness.routes.count('POST /switch')).toBe(1);
    expect(a).toBe(b);
  });

  it('the switch refusals are typed, and each leaves the current method going with what it teaches', async () => {
    const c = client();
    await startedOnReverseCall(c, 0);

    harness.routes.on('POST /switch', {
      ...problem(409, 'fallback_not_available', {
        fallback_available_at: new Date(harness.routes.serverNow() + 20_000).toISOString(),
      }),
      headers: { 'Retry-After': '20' },
    });
    await c.switchMethod('sms');
    expect(c.getState()).toMatchObject({
      phase: 'awaiting_user',
      method: 'reverse_flash_call',
      error: { code: 'fallback_not_available', status: 409, retryAfterMs: 20_000 },
      fallbackInMs: 20_000,
      canSwitch: false,
      // Only a journey at its limit has nowhere left to go: the methods stay offered for later.
      switchMethods: ['flash_call', 'sms'],
    });

    harness.routes.on('POST /switch', problem(409, 'journey_limit_reached'));
    await c.switchMethod();
    expect(c.getState()).toMatchObject({
      phase: 'awaiting_user',
      error: { code: 'journey_limit_reached' },
      switchMethods: [],
      canSwitch: false,
    });

    // Another tab switched first: the status, read at once, says where the verification went.
    const elsewhere = answer(
      harness.routes,
      journey(harness.routes, ['reverse_flash_call', 'sms'], [], null),
    );
    harness.routes.on('POST /switch', {
      ...problem(409, 'switch_in_progress'),
      headers: { 'Retry-After': '1' },
    });
    harness.routes.on('GET /status', { status: 200, body: elsewhere });
    const polls = harness.routes.count('GET /status');
    await c.switchMethod();
    expect(c.getState().error).toMatchObject({ code: 'switch_in_progress', retryAfterMs: 1000 });
    await jest.advanceTimersByTimeAsync(0);
    expect(harness.routes.count('GET /status')).toBe(polls + 1);
    expect(c.getState()).toMatchObject({
      method: 'sms',
      prompt: { kind: 'code' },
      methodsTried: ['reverse_flash_call', 'sms'],
    });
    expect(JSON.parse(harness.storage.getItem('nestjs-phone-verification')!)).toMatchObject({
      method: 'sms',
    });

    // A server without the route: a refusal like any other, and nothing changes.
    harness.routes.on('POST /switch', { status: 404, body: { statusCode: 404, message: 'Cannot POST' } });
    await c.switchMethod();
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', error: { status: 404 } });
  });

  it('a status without the journey fields (a server before journeys): one method, nothing to switch to', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({
      methodsTried: ['sms'],
      switchMethods: [],
      fallbackAvailableAt: null,
      fallbackInMs: null,
      canSwitch: false,
    });
    await c.switchMethod();
    expect(harness.routes.count('POST /switch')).toBe(1);
    // Not pending: refused locally.
    c.reset();
    await c.switchMethod();
    expect(c.getState().error?.code).toBe('no_verification');
    expect(harness.routes.count('POST /switch')).toBe(1);
  });

  it('a method that failed may be left at once: switch from the outcome back to a task', async () => {
    const c = client();
    await startedOnReverseCall(c, 45);
    harness.routes.on('GET /status', {
      status: 200,
      body: answer(harness.routes, {
        ...RFC,
        ...journey(harness.routes, ['reverse_flash_call'], ['flash_call'], 0),
        status: 'expired',
      }),
    });
    await jest.advanceTimersByTimeAsync(2500);
    expect(c.getState()).toMatchObject({ phase: 'expired', fallbackInMs: 0, canSwitch: true });
    harness.routes.on('POST /switch', {
      status: 201,
      body: answer(harness.routes, journey(harness.routes, ['reverse_flash_call', 'flash_call'], [], null)),
    });
    await c.switchMethod();
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', method: 'flash_call', canSwitch: false });
  });

  it('cancel: a failed call leaves the local stop with the refusal; verified meanwhile says verified', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    const c = client();

    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    harness.routes.on('POST /cancel', problem(503, 'service_unavailable'));
    await expect(c.cancel()).resolves.toMatchObject({
      phase: 'canceled',
      error: { code: 'service_unavailable' },
    });
    expect(harness.storage.items.size).toBe(0);

    // Unknown or already over on the server: nothing to cancel, no error.
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    harness.routes.on('POST /cancel', problem(404, 'not_found'));
    await expect(c.cancel()).resolves.toMatchObject({ phase: 'canceled', error: null });

    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    harness.routes.on('POST /cancel', problem(409, 'not_pending', { verification_status: 'verified' }));
    await expect(c.cancel()).resolves.toMatchObject({
      phase: 'verified',
      status: 'verified',
      verificationId: 'VID-1',
    });

    // A start right after: the cancel's late answer does not touch the new verification.
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    harness.routes.on('POST /cancel', problem(503, 'service_unavailable'));
    const canceling = c.cancel();
    harness.routes.on('POST /start', {
      status: 201,
      body: answer(harness.routes, { verification_id: 'VID-2' }),
    });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await canceling;
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', verificationId: 'VID-2', error: null });
    // The cancel went out whole, not aborted by the start.
    const cancel = harness.routes.requests.filter((r) => r.route === 'POST /cancel').at(-1)!;
    expect(cancel.init.signal.aborted).toBe(false);
  });

  it('a status of canceled (another tab canceled) ends following', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'canceled' }) });
    const c = client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(2500);
    expect(c.getState()).toMatchObject({ phase: 'canceled', connection: null });
    expect(harness.storage.items.size).toBe(0);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(harness.routes.count('GET /status')).toBe(1);
  });

  it('detectDevice: client hints first, else the Mobi token; nothing outside a browser', () => {
    const set = (value: unknown): void =>
      void Object.defineProperty(globalThis, 'navigator', { configurable: true, value });
    try {
      set({ userAgentData: { mobile: true }, userAgent: 'Mozilla/5.0 (X11; Linux x86_64)' });
      expect(detectDevice()).toBe('mobile');
      set({ userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0) Mobile/15E148 Safari/604.1' });
      expect(detectDevice()).toBe('mobile');
      set({ userAgent: 'Opera/9.80 (Android 2.3.3; Linux; Opera Mobi/ADR-1111101157; U) Presto/2.9.201' });
      expect(detectDevice()).toBe('mobile');
      set({ userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/120.0 Safari/537.36' });
      expect(detectDevice()).toBe('desktop');
      set({ userAgentData: { mobile: false }, userAgent: 'Mobile' });
      expect(detectDevice()).toBe('desktop');
      set(undefined);
      expect(detectDevice()).toBeUndefined();
    } finally {
      Reflect.deleteProperty(globalThis, 'navigator');
    }
  });

  it('the journey token of a switch answer is sent back with every later call, kept for a reload, and resumed with', async () => {
    const c = client();
    await startedOnReverseCall(c, 0);
    // A start's answer has no token: nothing is sent.
    expect(harness.routes.requests.every((r) => !r.url.includes('journey_token'))).toBe(true);
    const next = {
      ...answer(harness.routes, journey(harness.routes, ['reverse_flash_call', 'sms'], [], null)),
      code_length: 4,
    };
    harness.routes.on('POST /switch', { status: 201, body: { ...next, journey_token: 'JT-1' } });
    harness.routes.on('GET /status', { status: 200, body: next });
    await c.switchMethod();
    await jest.advanceTimersByTimeAsync(2500);
    const poll = harness.routes.requests.filter((r) => r.route === 'GET /status').at(-1)!;
    expect(poll.url).toBe('/verification/status/VID-1?journey_token=JT-1');
    harness.routes.on('POST /check', problem(400, 'invalid_code', { attempts_remaining: 2 }));
    await c.check('1234');
    expect(harness.routes.requests.at(-1)!.body).toEqual({
      verification_id: 'VID-1',
      code: '1234',
      journey_token: 'JT-1',
    });
    expect(JSON.parse(harness.storage.getItem('nestjs-phone-verification')!)).toMatchObject({
      id: 'VID-1',
      token: 'JT-1',
    });
    // A status answer with a newer token (another tab switched) replaces it.
    harness.routes.on('GET /status', { status: 200, body: { ...next, journey_token: 'JT-2' } });
    await jest.advanceTimersByTimeAsync(2500);
    // After a reload, the resumed read carries it; its answer's newer token (a switch meanwhile) is followed.
    harness.routes.on(
      'GET /status',
      { status: 200, body: { ...next, journey_token: 'JT-3' } },
      { status: 200, body: next },
    );
    const reloaded = client();
    expect(await reloaded.resume()).toBe(true);
    const resumed = harness.routes.requests.filter((r) => r.route === 'GET /status').at(-1)!;
    expect(resumed.url).toBe('/verification/status/VID-1?journey_token=JT-2');
    // The next reload's read answers without a token: the one kept (JT-3, the last answer's) goes on.
    harness.routes.on('GET /status', { status: 200, body: next });
    const again = client();
    expect(await again.resume()).toBe(true);
    harness.routes.on('POST /cancel', canceled());
    await again.cancel();
    expect(harness.routes.requests.at(-1)!.body).toEqual({ verification_id: 'VID-1', journey_token: 'JT-3' });
  });
});

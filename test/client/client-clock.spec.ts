import { describe, expect, it, jest } from '@jest/globals';
import type { EventSourceLike, VerificationState } from '../../src/client/index.js';
import { answer, canceled, clientHarness, journey, problem } from './fake-routes.js';

/**
 * The client on the clock, at its bounds: each countdown reaches the page once a second, the expiry's read
 * and its grace to the millisecond, polling and streaming at the expiry, the stream's edges, and WebOTP
 * asked only while a code is awaited.
 */
describe('VerificationClient on the clock', () => {
  const harness = clientHarness();

  /** A start whose answer gives only the fields given (no resend time, no expiry unless said). */
  async function started(fields: Record<string, unknown>, options = {}) {
    const c = harness.client(options);
    const sent = answer(harness.routes, { resend_available_at: null, poll_interval_ms: 7000, ...fields });
    harness.routes.on('POST /start', { status: 201, body: sent });
    harness.routes.on('GET /status', { status: 200, body: sent });
    await c.start({ phoneNumber: '+79123456789', method: sent.method as string });
    return c;
  }

  it.each([
    ['the expiry', {}, 'expiresInMs'],
    ['the resend', { expires_at: null, resend_available_at: '2026-11-23T12:01:00.000Z' }, 'resendInMs'],
    ['the fallback', { expires_at: null, fallback: true }, 'fallbackInMs'],
  ] as const)(
    '%s alone counting: the page is told once a second, a second less each time',
    async (_name, fields, key) => {
      const { fallback, ...rest } = fields as Record<string, unknown>;
      const c = await started({
        poll_interval_ms: 60_000,
        ...rest,
        ...(fallback ? journey(harness.routes, ['sms'], ['flash_call'], 45) : {}),
      });
      await jest.advanceTimersByTimeAsync(1000);
      const states: VerificationState[] = [];
      c.subscribe((s) => states.push(s));
      await jest.advanceTimersByTimeAsync(10_000);
      expect(states).toHaveLength(10);
      const values = states.map((s) => s[key] as number);
      expect(values.slice(1).map((v, i) => values[i]! - v)).toEqual(Array(9).fill(1000));
    },
  );

  it("the server's clock moves only when a Date header is off by more than a second from it", async () => {
    // The device at 12:00:00.000, the server 30 s behind: its Date says 11:59:30, taken as its middle second.
    harness.routes.offsetMs = -30_000;
    const c = await started({ poll_interval_ms: 60_000 });
    expect(c.now() - Date.now()).toBe(-29_500);
    const readAgain = async (offsetMs: number) => {
      harness.routes.offsetMs = offsetMs;
      c.refresh();
      await jest.advanceTimersByTimeAsync(0);
      return c.now() - Date.now();
    };
    // Exactly one second off (the header's own resolution): kept.
    expect(await readAgain(-31_000)).toBe(-29_500);
    expect(await readAgain(-29_000)).toBe(-29_500);
    // Two seconds off: taken.
    expect(await readAgain(-32_000)).toBe(-31_500);
  });

  it('a second verification on the same client counts down as the first did (its clock stopped in between)', async () => {
    const c = await started({ poll_interval_ms: 7000 });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    await jest.advanceTimersByTimeAsync(7000);
    expect(c.getState().phase).toBe('verified');
    c.reset();
    const again = answer(harness.routes, { resend_available_at: null, poll_interval_ms: 60_000 });
    harness.routes.on('POST /start', { status: 201, body: again });
    harness.routes.on('GET /status', { status: 200, body: again });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    const states: VerificationState[] = [];
    c.subscribe((s) => states.push(s));
    await jest.advanceTimersByTimeAsync(5000);
    const left = states.map((s) => s.expiresInMs as number);
    expect(left).toHaveLength(5);
    expect(left.slice(1).map((v, i) => left[i]! - v)).toEqual(Array(4).fill(1000));
  });

  // A timer left running keeps a page waking every second and a Node process (a host's tests, a server
  // render) from exiting: each verification's countdowns run on one timer, stopped with them.
  it.each([
    ['verified by a code (its countdowns moved several times)', 'verified'],
    ['disposed while a code is awaited', 'disposed'],
  ] as const)('the countdowns leave no timer running once %s', async (_name, end) => {
    const c = await started({ poll_interval_ms: 60_000, resend_available_at: '2026-11-23T12:01:00.000Z' });
    harness.routes.on('POST /check', problem(400, 'invalid_code', { attempts_remaining: 2 }), {
      status: 200,
      body: { verification_id: 'VID-1', status: 'verified', verified: true },
    });
    await jest.advanceTimersByTimeAsync(3000);
    await c.check('111111');
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', resendInMs: 57_000 });
    if (end === 'verified') await c.check('123456');
    else c.dispose();
    expect(c.getState().phase).toBe(end === 'verified' ? 'verified' : 'idle');
    expect(jest.getTimerCount()).toBe(0);
  });

  it.each([0, 250, 999])(
    'the server clock read from whole-second Date headers is off by half a second at most: a server %i ms past its second ends the page 5 s after its expiry, ±500 ms',
    async (subSecondMs) => {
      // No serverNow: the client has only the Date header, which drops the server's milliseconds.
      harness.routes.offsetMs = 10_000 + subSecondMs;
      const c = await started({ poll_interval_ms: 60_000 });
      const serverEndsAt = 300_000 + 5000; // device time: the expiry (300 s on the server's clock) and the grace
      let endedAt: number | undefined;
      for (let t = 300_000; t <= 307_000 && endedAt === undefined; t += 1) {
        await jest.advanceTimersByTimeAsync(t === 300_000 ? 300_000 : 1);
        if (c.getState().phase === 'expired') endedAt = t;
      }
      expect(endedAt).toBeDefined();
      expect(Math.abs(endedAt! - serverEndsAt)).toBeLessThanOrEqual(500);
    },
  );

  it('polling: a read at the expiry to the millisecond, none more; expired 5 s after it, to the millisecond', async () => {
    const c = await started({});
    await jest.advanceTimersByTimeAsync(299_999);
    const polls = harness.routes.count('GET /status');
    // The tick at the expiry asks at once (a timer of 0 ms, which runs 1 ms later).
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(polls);
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(polls + 1);
    await jest.advanceTimersByTimeAsync(4998);
    expect(harness.routes.count('GET /status')).toBe(polls + 1);
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', expiresInMs: 0 });
    await jest.advanceTimersByTimeAsync(1);
    expect(c.getState()).toMatchObject({ phase: 'expired', status: 'expired' });
  });

  it('over the stream: no poll at the expiry (the stream says every change); expired 5 s after it', async () => {
    const c = await started({}, { eventSource: harness.routes.eventSource });
    await jest.advanceTimersByTimeAsync(304_999);
    expect(harness.routes.count('GET /status')).toBe(0);
    expect(c.getState().phase).toBe('awaiting_user');
    await jest.advanceTimersByTimeAsync(1);
    expect(c.getState()).toMatchObject({ phase: 'expired', connection: null });
    expect(harness.routes.streams[0]!.closed).toBe(true);
  });

  it('an outcome has no countdowns: no expiry, no resend, no switch unless it failed with ways left', async () => {
    const c = await started({
      resend_available_at: '2026-11-23T12:00:30.000Z',
      ...journey(harness.routes, ['sms'], ['flash_call'], 600),
    });
    harness.routes.on('GET /status', {
      status: 200,
      body: answer(harness.routes, { status: 'verified', switch_methods: ['flash_call'] }),
    });
    await jest.advanceTimersByTimeAsync(60_000);
    expect(c.getState()).toMatchObject({
      phase: 'verified',
      expiresInMs: null,
      resendInMs: null,
      canResend: false,
      fallbackInMs: null,
      canSwitch: false,
    });

    const failed = await started({ ...journey(harness.routes, ['sms'], [], 600) });
    harness.routes.on('GET /status', {
      status: 200,
      body: answer(harness.routes, { status: 'failed', ...journey(harness.routes, ['sms'], [], null) }),
    });
    await jest.advanceTimersByTimeAsync(7000);
    expect(failed.getState()).toMatchObject({ phase: 'failed', fallbackInMs: null, canSwitch: false });

    // A step that failed or expired with ways left may be left at once, whatever its fallback said.
    for (const status of ['failed', 'expired'] as const) {
      const ended = await started({ ...journey(harness.routes, ['sms'], ['flash_call'], 600) });
      harness.routes.on('GET /status', {
        status: 200,
        body: answer(harness.routes, { status, ...journey(harness.routes, ['sms'], ['flash_call'], 600) }),
      });
      await jest.advanceTimersByTimeAsync(7000);
      expect(ended.getState()).toMatchObject({ phase: status, fallbackInMs: 0, canSwitch: true });
    }
  });
});

describe('VerificationClient: the status stream at its edges', () => {
  const harness = clientHarness();

  /** An EventSource the test drives with raw `data`. */
  function rawSource() {
    const listeners = new Map<string, ((event: { data?: unknown }) => void)[]>();
    const source: EventSourceLike & { send(data: string): void; closed: boolean } = {
      readyState: 1,
      closed: false,
      addEventListener: (type, listener) =>
        void listeners.set(type, [...(listeners.get(type) ?? []), listener]),
      close: () => void (source.closed = true),
      send: (data) => listeners.get('status')?.forEach((l) => l({ data })),
    };
    return source;
  }

  it('a message that is not JSON is passed over; the next one is read', async () => {
    const source = rawSource();
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    const c = harness.client({ eventSource: () => source });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    source.send('<html>proxy error</html>');
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', error: null });
    source.send(JSON.stringify(answer(harness.routes, { status: 'verified' })));
    expect(c.getState().phase).toBe('verified');
  });

  it('a stream the page may not open (it throws): polling at once', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    const c = harness.client({
      eventSource: () => {
        throw new Error('Refused by the Content Security Policy');
      },
    });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(0);
    expect(c.getState().phase).toBe('verified');
    expect(harness.routes.count('GET /status')).toBe(1);
  });

  it('an error before the first message, even one the browser would retry, falls back to polling', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    const c = harness.client({ eventSource: harness.routes.eventSource });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    harness.routes.streams[0]!.fail(0);
    await jest.advanceTimersByTimeAsync(0);
    expect(harness.routes.streams[0]!.closed).toBe(true);
    expect(c.getState()).toMatchObject({ phase: 'verified' });
  });

  it.each([
    ['404: the verification fails', 404, 'failed'],
    ['503: nothing changes', 503, 'awaiting_user'],
  ] as const)('a refresh over the stream answered %s', async (_name, status, phase) => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', {
      status,
      body: { error_code: status === 404 ? 'not_found' : 'service_unavailable', status },
    });
    const c = harness.client({ eventSource: harness.routes.eventSource });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    c.refresh();
    await jest.advanceTimersByTimeAsync(0);
    expect(c.getState().phase).toBe(phase);
  });

  it('a refresh answered after a cancel changes nothing', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    harness.routes.on('POST /cancel', canceled());
    const c = harness.client({ eventSource: harness.routes.eventSource });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    c.refresh();
    await c.cancel();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(c.getState().phase).toBe('canceled');
  });
});

describe('VerificationClient: WebOTP only while a code is awaited', () => {
  const harness = clientHarness();

  /** Runs `run` on a page with WebOTP (`otp: false`: `navigator.credentials` alone): each request's signal and resolve. */
  async function onPage<T>(
    otp: boolean,
    run: (requests: { signal: AbortSignal; offer: (code: string) => void }[]) => Promise<T>,
  ): Promise<T> {
    const requests: { signal: AbortSignal; offer: (code: string) => void }[] = [];
    const globals = globalThis as Record<string, unknown>;
    if (otp) globals.OTPCredential = class {};
    Object.defineProperty(globalThis, 'navigator', {
      configurable: true,
      value: {
        credentials: {
          get: (options: { signal: AbortSignal }) =>
            new Promise((resolve) =>
              requests.push({ signal: options.signal, offer: (code) => resolve({ code }) }),
            ),
        },
      },
    });
    try {
      return await run(requests);
    } finally {
      delete globals.OTPCredential;
      Reflect.deleteProperty(globalThis, 'navigator');
    }
  }

  async function asked(
    webOtp: boolean | undefined,
    fields: Record<string, unknown>,
    checkInFlight = false,
    otp = true,
  ) {
    return onPage(otp, async (requests) => {
      harness.routes.on('POST /start', { status: 201, body: answer(harness.routes, fields) });
      harness.routes.on('POST /check', {
        status: 200,
        body: { verification_id: 'VID-1', status: 'sent', verified: false },
      });
      const c = harness.client({ webOtp });
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      if (checkInFlight) void c.check('12');
      return requests.map((r) => r.signal.aborted);
    });
  }

  it('a browser without WebOTP (credentials, no OTPCredential) is asked nothing', async () => {
    expect(await asked(true, {}, false, false)).toEqual([]);
  });

  it('a WebOTP request the browser refuses (the user dismissed it) checks nothing: the code is still awaited', async () => {
    const globals = globalThis as Record<string, unknown>;
    globals.OTPCredential = class {};
    Object.defineProperty(globalThis, 'navigator', {
      configurable: true,
      value: {
        credentials: { get: () => Promise.reject(new DOMException('dismissed', 'NotAllowedError')) },
      },
    });
    try {
      harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
      const c = harness.client({ webOtp: true });
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      await jest.advanceTimersByTimeAsync(0);
      expect(harness.routes.count('POST /check')).toBe(0);
      expect(c.getState()).toMatchObject({ phase: 'awaiting_user', prompt: { kind: 'code' }, error: null });
    } finally {
      delete globals.OTPCredential;
      Reflect.deleteProperty(globalThis, 'navigator');
    }
  });

  it('a credential whose code is not text (a browser or extension of its own) is not checked: the code is still awaited', async () => {
    await onPage(true, async (requests) => {
      harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
      const c = harness.client({ webOtp: true });
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      requests[0]!.offer(424242 as unknown as string);
      await jest.advanceTimersByTimeAsync(0);
      expect(harness.routes.count('POST /check')).toBe(0);
      expect(c.getState()).toMatchObject({ phase: 'awaiting_user', prompt: { kind: 'code' }, error: null });
    });
  });

  it("a runtime without navigator (Node 20: a host's tests, a server render) is asked nothing and fails nothing", async () => {
    const globals = globalThis as Record<string, unknown>;
    const saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    const failures: unknown[] = [];
    const onFailure = (reason: unknown) => void failures.push(reason);
    process.on('unhandledRejection', onFailure);
    globals.OTPCredential = class {};
    Object.defineProperty(globalThis, 'navigator', { configurable: true, value: undefined });
    try {
      harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
      const c = harness.client({ webOtp: true });
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      await jest.advanceTimersByTimeAsync(0);
      await new Promise((resolve) =>
        jest.requireActual<typeof import('node:timers')>('node:timers').setImmediate(resolve),
      );
      expect(c.getState()).toMatchObject({ phase: 'awaiting_user', prompt: { kind: 'code' } });
      expect(failures).toEqual([]);
    } finally {
      process.off('unhandledRejection', onFailure);
      delete globals.OTPCredential;
      Reflect.deleteProperty(globalThis, 'navigator');
      if (saved) Object.defineProperty(globalThis, 'navigator', saved);
    }
  });

  it('a code the browser offers after the user typed one (its request aborted) is not checked again', async () => {
    await onPage(true, async (requests) => {
      harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
      harness.routes.on('POST /check', problem(400, 'invalid_code', { attempts_remaining: 2 }));
      const c = harness.client({ webOtp: true });
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      await c.check('1111');
      // The typed code was wrong: a new request is open; the first, aborted, resolves all the same.
      requests[0]!.offer('4242');
      await jest.advanceTimersByTimeAsync(0);
      expect(harness.routes.count('POST /check')).toBe(1);
    });
  });

  it.each([
    ['a code awaited, WebOTP by default', undefined, {}, false, [false]],
    ['a code awaited, WebOTP switched off', false, {}, false, []],
    ['a number to call (no code)', true, { awaiting_code: false, number_to_call: '+78005551234' }, false, []],
    ['a code sent for checking: the request is aborted', true, {}, true, [true]],
  ] as const)('%s', async (_name, webOtp, fields, checking, seen) => {
    expect(await asked(webOtp, fields, checking)).toEqual(seen);
  });
});

describe('VerificationClient: what each call sends, and the phases in between', () => {
  const harness = clientHarness();

  it("JSON asked for, fetch's default credentials (same-origin), never a cached answer; while starting, nothing of a journey yet", async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes) });
    const c = harness.client();
    const states: Record<string, unknown>[] = [];
    c.subscribe((s) => states.push({ ...s }));
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(2500);
    expect(states[0]).toMatchObject({ phase: 'starting', method: 'sms', resumed: false, switchMethods: [] });
    for (const { init } of harness.routes.requests) {
      expect(init).toMatchObject({ cache: 'no-store', headers: { accept: 'application/json' } });
      // No mode of its own: the page's same-origin cookies go, another origin's do not.
      expect(init.credentials).toBeUndefined();
    }
    expect(harness.routes.requests.map((r) => r.route)).toEqual(['POST /start', 'GET /status']);
  });

  it('while the operator confirms a code, the expiry counts down, and passing it with no word ends in expired', async () => {
    const c = harness.client();
    const sent = answer(harness.routes, { method: 'operator_id', poll_interval_ms: 60_000 }, 60);
    harness.routes.on('POST /start', { status: 201, body: sent });
    harness.routes.on('GET /status', { status: 200, body: sent });
    harness.routes.on('POST /check', {
      status: 200,
      body: { verification_id: 'VID-1', status: 'sent', verified: false },
    });
    await c.start({ phoneNumber: '+79123456789', method: 'operator_id' });
    await c.check('123456');
    await jest.advanceTimersByTimeAsync(10_000);
    expect(c.getState()).toMatchObject({ phase: 'verifying', expiresInMs: 50_000 });
    await jest.advanceTimersByTimeAsync(54_999);
    expect(c.getState().phase).toBe('verifying');
    await jest.advanceTimersByTimeAsync(1);
    expect(c.getState()).toMatchObject({ phase: 'expired', status: 'expired' });
  });

  it('a refresh over the stream, answered, moves the page', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    const c = harness.client({ eventSource: harness.routes.eventSource });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    c.refresh();
    await jest.advanceTimersByTimeAsync(0);
    expect(c.getState().phase).toBe('verified');
  });

  it.each(['not_found', 'not_pending'])(
    'a cancel the server refuses as %s (nothing left to cancel): canceled, no error shown',
    async (code) => {
      harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
      harness.routes.on('POST /cancel', problem(code === 'not_found' ? 404 : 409, code));
      const c = harness.client();
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      await c.cancel();
      expect(c.getState()).toMatchObject({ phase: 'canceled', error: null });
    },
  );
});

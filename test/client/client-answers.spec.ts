import { describe, expect, it, jest } from '@jest/globals';
import {
  VerificationClient,
  VerificationClientError,
  type FetchLike,
  type ResponseLike,
} from '../../src/client/index.js';
import { answer, canceled, clientHarness, FakeEventSource, journey, problem } from './fake-routes.js';

/**
 * What the page sees of answers that are not the happy path: bodies that are not the contract's problem,
 * refused checks, switches and cancels in each phase, a resume that meets an outcome or an outage, and the
 * status stream read with fetch when the routes need the host's headers.
 */
describe('VerificationClient: answers that are not a problem of the contract get the client’s own codes', () => {
  const harness = clientHarness();

  /** `fetch` answering every call with `status` and a body that `json()` gives (or throws, as HTML does). */
  const replying =
    (status: number, body: () => unknown): FetchLike =>
    async () => ({
      ok: status < 300,
      status,
      headers: { get: () => null },
      json: async () => body(),
    });
  const html = () => {
    throw new SyntaxError('Unexpected token <');
  };

  const cases: [number, string, () => unknown, string][] = [
    [429, 'an HTML page', html, 'rate_limit_exceeded'],
    [500, '{}', () => ({}), 'service_unavailable'],
    [502, 'an HTML page', html, 'service_unavailable'],
    [499, 'an HTML page', html, 'unexpected_response'],
    [404, 'null', () => null, 'unexpected_response'],
    [200, 'a string', () => 'verified', 'unexpected_response'],
    [200, 'null', () => null, 'unexpected_response'],
    [429, 'its own code', () => ({ error_code: 'too_many_wrong_codes' }), 'too_many_wrong_codes'],
    [503, 'its own code', () => ({ error_code: 'start_refused' }), 'start_refused'],
  ];
  it.each(cases)('%i with %s: %s, nothing started', async (status, _body, body, code) => {
    const c = harness.client({ fetch: replying(status, body) });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({ phase: 'idle', method: 'sms', error: { code, status } });
    await jest.advanceTimersByTimeAsync(10_000);
    expect(c.getState()).toMatchObject({ phase: 'idle', verificationId: null });
  });
});

describe('VerificationClient: refusals of a check, a switch and a cancel, by phase', () => {
  const harness = clientHarness();
  const started = async (fields: Record<string, unknown> = {}) => {
    const c = harness.client();
    const sent = answer(harness.routes, fields);
    harness.routes.on('POST /start', { status: 201, body: sent });
    harness.routes.on('GET /status', { status: 200, body: sent });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    return c;
  };

  it('a check the server no longer knows (404) fails the verification and stops following', async () => {
    const c = await started();
    harness.routes.on('POST /check', problem(400, 'invalid_code', { attempts_remaining: 2 }));
    await c.check('111111');
    harness.routes.on('POST /check', problem(404, 'not_found'));
    await c.check('123456');
    expect(c.getState()).toMatchObject({
      phase: 'failed',
      status: 'sent',
      attemptsRemaining: 2,
      error: { code: 'not_found' },
    });
    const polls = harness.routes.count('GET /status');
    await jest.advanceTimersByTimeAsync(30_000);
    expect(harness.routes.count('GET /status')).toBe(polls);
  });

  it('no attempt left: failed, with the server’s failed status; a count not given keeps the last one', async () => {
    const c = await started();
    harness.routes.on('POST /check', problem(400, 'invalid_code', { attempts_remaining: 2 }));
    await c.check('111111');
    harness.routes.on('POST /check', problem(400, 'invalid_code'));
    await c.check('222222');
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', status: 'sent', attemptsRemaining: 2 });
    harness.routes.on('POST /check', problem(429, 'too_many_wrong_codes', { attempts_remaining: 0 }));
    await c.check('333333');
    expect(c.getState()).toMatchObject({ phase: 'failed', status: 'failed', attemptsRemaining: 0 });
  });

  it('a check refused as not_pending reads the status at once, and the page learns the outcome', async () => {
    const c = await started({ poll_interval_ms: 7000 });
    harness.routes.on('POST /check', problem(409, 'not_pending', { verification_status: 'verified' }));
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    await c.check('123456');
    await jest.advanceTimersByTimeAsync(0);
    expect(harness.routes.count('GET /status')).toBe(1);
    expect(c.getState().phase).toBe('verified');
  });

  it('a check, a switch or a cancel where none applies sends nothing', async () => {
    const c = await started({ awaiting_code: false, number_to_call: '+78005551234' });
    await c.check('123456');
    expect(c.getState().error?.code).toBe('no_verification');
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    await jest.advanceTimersByTimeAsync(2500);
    expect(c.getState()).toMatchObject({ phase: 'verified', canSwitch: false, canResend: false });
    await c.switchMethod('sms');
    expect(c.getState().error?.code).toBe('no_verification');
    await c.cancel();
    expect(c.getState().phase).toBe('canceled');
    expect(harness.routes.requests.map((r) => r.route).filter((r) => r.startsWith('POST'))).toEqual([
      'POST /start',
    ]);
    await harness.client().switchMethod();
    expect(harness.routes.count('POST /switch')).toBe(0);
  });

  it('while the operator confirms an accepted code: a second check is refused locally; switch and cancel go', async () => {
    const c = await started({ method: 'operator_id' });
    harness.routes.on('POST /check', {
      status: 200,
      body: { verification_id: 'VID-1', status: 'sent', verified: false },
    });
    await c.check('123456');
    expect(c.getState()).toMatchObject({ phase: 'verifying', prompt: null });
    expect(c.getState().expiresInMs).toBe(300_000);
    await c.check('123456');
    expect(harness.routes.count('POST /check')).toBe(1);
    harness.routes.on('POST /switch', {
      status: 201,
      body: answer(harness.routes, journey(harness.routes, ['operator_id', 'sms'], [], null)),
    });
    await c.switchMethod('sms');
    expect(harness.routes.count('POST /switch')).toBe(1);
    harness.routes.on('POST /check', {
      status: 200,
      body: { verification_id: 'VID-1', status: 'sent', verified: false },
    });
    await c.check('123456');
    expect(c.getState().phase).toBe('verifying');
    harness.routes.on('POST /cancel', canceled());
    await c.cancel();
    expect(harness.routes.count('POST /cancel')).toBe(1);
  });

  it('a switch starts the new method afresh: no refusal, no count of the old one, the number kept', async () => {
    const c = await started({ ...journey(harness.routes, ['sms'], ['flash_call'], 0) });
    harness.routes.on('POST /check', problem(400, 'invalid_code', { attempts_remaining: 2 }));
    await c.check('111111');
    const switched = answer(harness.routes, {
      ...journey(harness.routes, ['sms', 'flash_call'], [], null),
      phone_number: '+7******6789',
      code_length: 4,
    });
    harness.routes.on('POST /switch', { status: 201, body: switched });
    harness.routes.on('GET /status', { status: 200, body: switched });
    await c.switchMethod();
    expect(c.getState()).toMatchObject({
      phase: 'awaiting_user',
      method: 'flash_call',
      error: null,
      attemptsRemaining: null,
      resumed: false,
      phoneNumber: '+79123456789',
    });
    await jest.advanceTimersByTimeAsync(60_000);
    expect(c.getState().canResend).toBe(true);
  });

  it('a handle lost while following leaves nothing to switch to', async () => {
    const c = await started({ ...journey(harness.routes, ['sms'], ['flash_call'], 0) });
    harness.routes.on('GET /status', problem(404, 'not_found'));
    await jest.advanceTimersByTimeAsync(2500);
    expect(c.getState()).toMatchObject({
      phase: 'failed',
      switchMethods: [],
      canSwitch: false,
      fallbackInMs: null,
    });
  });

  it('a start answered with an outcome already is not followed', async () => {
    const c = harness.client();
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes, { status: 'verified' }) });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({
      phase: 'verified',
      expiresInMs: null,
      resendInMs: null,
      canResend: false,
    });
    await jest.advanceTimersByTimeAsync(30_000);
    expect(harness.routes.count('GET /status')).toBe(0);
  });

  it('no resend cooldown (resend_available_at null): a resend is offered at once and sends the start again', async () => {
    const c = harness.client();
    harness.routes.on('POST /start', {
      status: 201,
      body: answer(harness.routes, { resend_available_at: null }),
    });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', resendInMs: null, canResend: true });
    await c.resend();
    expect(c.getState().error).toBeNull();
    expect(harness.routes.count('POST /start')).toBe(2);
  });
});

describe('VerificationClient: resume', () => {
  const harness = clientHarness();
  const save = () =>
    harness.storage.setItem(
      'nestjs-phone-verification',
      JSON.stringify({ id: 'VID-1', method: 'sms', phone: '+79123456789' }),
    );

  it('while it reads: starting, resumed, the saved method; canceled meanwhile, it stays canceled', async () => {
    save();
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes) });
    harness.routes.on('POST /cancel', canceled());
    const c = harness.client();
    const resuming = c.resume();
    expect(c.getState()).toMatchObject({
      phase: 'starting',
      resumed: true,
      method: 'sms',
      verificationId: 'VID-1',
    });
    await c.cancel();
    await expect(resuming).resolves.toBe(false);
    expect(c.getState().phase).toBe('canceled');
    expect(harness.routes.count('POST /cancel')).toBe(1);
  });

  it("canceled while it reads, a switched journey's cancel carries its kept token (a store that lost the journey finds it by it)", async () => {
    harness.storage.setItem(
      'nestjs-phone-verification',
      JSON.stringify({ id: 'VID-2', method: 'flash_call', phone: '+79123456789', token: 'JT-2' }),
    );
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes) });
    harness.routes.on('POST /cancel', canceled('VID-2'));
    const c = harness.client();
    const resuming = c.resume();
    await c.cancel();
    await expect(resuming).resolves.toBe(false);
    expect(harness.routes.requests.at(-1)).toMatchObject({
      route: 'POST /cancel',
      body: { verification_id: 'VID-2', journey_token: 'JT-2' },
    });
  });

  it('an outcome is forgotten (a second reload reads nothing); an outage keeps it for the next reload', async () => {
    save();
    harness.routes.on('GET /status', problem(503, 'service_unavailable'));
    await expect(harness.client().resume()).resolves.toBe(false);
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    const c = harness.client();
    const phases: string[] = [];
    c.subscribe((state) => phases.push(state.phase));
    await expect(c.resume()).resolves.toBe(false);
    // The page is not told the old outcome as if it had just happened: back to idle, no status.
    expect(phases).toEqual(['starting', 'idle']);
    expect(c.getState()).toMatchObject({ phase: 'idle', status: null });
    expect(harness.routes.count('GET /status')).toBe(2);
    await expect(harness.client().resume()).resolves.toBe(false);
    expect(harness.routes.count('GET /status')).toBe(2);
  });
});

describe('VerificationClient: a page whose routes need its headers reads the status stream with fetch', () => {
  const harness = clientHarness();

  /** The routes, and the stream route answering with `messages` then staying open. */
  function withStream(messages: string[], status = 200): { fetch: FetchLike; streams: string[][] } {
    const streams: string[][] = [];
    const fetch: FetchLike = async (url, init) => {
      if (!url.endsWith('/events')) return harness.routes.fetch(url, init);
      streams.push([url, init.headers.authorization ?? '']);
      const encoder = new TextEncoder();
      const queue = [...messages];
      const response: ResponseLike = {
        ok: status < 300,
        status,
        headers: { get: () => null },
        json: async () => ({}),
        body: {
          getReader: () => ({
            read: () =>
              queue.length > 0
                ? Promise.resolve({ done: false, value: encoder.encode(queue.shift()) })
                : new Promise(() => undefined),
          }),
        },
      };
      return response;
    };
    return { fetch, streams };
  }
  const headers = () => ({ authorization: 'Bearer T-1' });
  const verified = () =>
    `event: status\ndata: ${JSON.stringify(answer(harness.routes, { status: 'verified' }))}\n\n`;

  it('the stream carries the headers, and its messages reach the page; no polls', async () => {
    const { fetch, streams } = withStream([verified()]);
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    const c = harness.client({ fetch, headers, eventSource: undefined });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState().connection).toBe('stream');
    await jest.advanceTimersByTimeAsync(0);
    expect(streams).toEqual([['/verification/status/VID-1/events', 'Bearer T-1']]);
    expect(c.getState().phase).toBe('verified');
    expect(harness.routes.count('GET /status')).toBe(0);
  });

  it('refused (401): polling takes over, with the headers', async () => {
    const { fetch, streams } = withStream([], 401);
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    const c = harness.client({ fetch, headers, eventSource: undefined });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(0);
    expect(streams).toHaveLength(1);
    expect(c.getState().phase).toBe('verified');
    expect(harness.routes.requests.at(-1)).toMatchObject({
      route: 'GET /status',
      init: { headers: { authorization: 'Bearer T-1' } },
    });
  });

  it('a stream the server ends after a message, then refuses to reopen: polling takes over', async () => {
    const pending = `event: status\ndata: ${JSON.stringify(answer(harness.routes))}\n\n`;
    let opened = 0;
    const fetch: FetchLike = async (url, init) => {
      if (!url.endsWith('/events')) return harness.routes.fetch(url, init);
      opened += 1;
      // The first: one message, then the end; the next (EventSource's reconnection): 404.
      const chunks = opened === 1 ? [new TextEncoder().encode(pending)] : [];
      const response: ResponseLike = {
        ok: opened === 1,
        status: opened === 1 ? 200 : 404,
        headers: { get: () => null },
        json: async () => ({}),
        body: {
          getReader: () => ({
            read: () =>
              Promise.resolve(chunks.length > 0 ? { done: false, value: chunks.shift() } : { done: true }),
          }),
        },
      };
      return response;
    };
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes, { status: 'verified' }) });
    const c = harness.client({ fetch, headers, eventSource: undefined });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(0);
    expect(c.getState()).toMatchObject({ connection: 'stream', phase: 'awaiting_user' });
    await jest.advanceTimersByTimeAsync(3000);
    expect(opened).toBe(2);
    expect(c.getState().connection).toBe('polling');
    await jest.advanceTimersByTimeAsync(1);
    expect(harness.routes.count('GET /status')).toBe(1);
    expect(c.getState().phase).toBe('verified');
  });

  it('canceled before the stream was opened: it is never opened', async () => {
    const { fetch, streams } = withStream([verified()]);
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('POST /cancel', canceled());
    const c = harness.client({ fetch, headers, eventSource: undefined });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await c.cancel();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(streams).toEqual([]);
    expect(c.getState().phase).toBe('canceled');
  });
});

describe('VerificationClient: made where there is no fetch', () => {
  it('throws its own error, fetch_unavailable, naming the option to pass', () => {
    const pageFetch = globalThis.fetch;
    Reflect.deleteProperty(globalThis, 'fetch');
    try {
      let thrown: unknown;
      try {
        new VerificationClient({});
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(VerificationClientError);
      expect(thrown).toMatchObject({
        code: 'fetch_unavailable',
        status: 0,
        message: 'fetch_unavailable',
      });
    } finally {
      globalThis.fetch = pageFetch;
    }
    expect(() => new VerificationClient({ fetch: pageFetch })).not.toThrow();
  });
});

describe("VerificationClient: the browser's own EventSource", () => {
  const harness = clientHarness();

  it('a page with EventSource whose routes need no headers follows the status over it', async () => {
    const opened: FakeEventSource[] = [];
    const globals = globalThis as { EventSource?: unknown };
    const before = globals.EventSource;
    globals.EventSource = class extends FakeEventSource {
      constructor(url: string) {
        super(url);
        opened.push(this);
      }
    };
    try {
      harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
      const c = harness.client({ eventSource: undefined });
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      expect(opened.map((source) => source.url)).toEqual(['/verification/status/VID-1/events']);
      expect(c.getState().connection).toBe('stream');
      opened[0]!.push(answer(harness.routes, { status: 'verified' }));
      expect(c.getState().phase).toBe('verified');
      expect(harness.routes.count('GET /status')).toBe(0);
    } finally {
      if (before === undefined) Reflect.deleteProperty(globals, 'EventSource');
      else globals.EventSource = before;
    }
  });
});

describe('VerificationClient: calls with nothing to act on, and answers that are no answer', () => {
  const harness = clientHarness();

  it("a fresh client's resend() and refresh() answer instead of throwing", async () => {
    const c = harness.client();
    await expect(c.resend()).resolves.toMatchObject({ error: { code: 'resend_unavailable' } });
    expect(() => c.refresh()).not.toThrow();
    expect(harness.routes.requests).toEqual([]);
  });

  it('a fetch that resolves with something that is no response: unexpected_response', async () => {
    const c = harness.client({ fetch: async () => ({}) as ResponseLike });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({ phase: 'idle', error: { code: 'unexpected_response', status: 0 } });
  });

  it('a second check while the first is under way sends nothing', async () => {
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('POST /check', {
      status: 200,
      body: { verification_id: 'VID-1', status: 'verified', verified: true },
    });
    const c = harness.client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await Promise.all([c.check('111111'), c.check('222222')]);
    expect(harness.routes.requests.filter((r) => r.route === 'POST /check').map((r) => r.body)).toEqual([
      { verification_id: 'VID-1', code: '111111' },
    ]);
    expect(c.getState().phase).toBe('verified');
  });

  it('a failed verification whose switch is answered 429: the switch waits it out, and the verification stays failed past its expiry', async () => {
    const failed = answer(harness.routes, { status: 'failed', switch_methods: ['flash_call'] }, 10);
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes, {}, 10) });
    harness.routes.on('GET /status', { status: 200, body: failed });
    harness.routes.on('POST /switch', {
      ...problem(429, 'rate_limit_exceeded'),
      headers: { 'Retry-After': '30' },
    });
    const c = harness.client();
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(2500);
    expect(c.getState()).toMatchObject({ phase: 'failed', canSwitch: true });
    await c.switchMethod();
    expect(c.getState()).toMatchObject({
      phase: 'failed',
      error: { code: 'rate_limit_exceeded' },
      retryInMs: 30_000,
    });
    await c.switchMethod();
    expect(harness.routes.count('POST /switch')).toBe(1);
    // The wait's countdown runs on past the expiry (10 s) and its grace: what failed does not become expired.
    await jest.advanceTimersByTimeAsync(20_000);
    expect(c.getState()).toMatchObject({ phase: 'failed', status: 'failed', retryInMs: 10_000 });
  });

  it('a poll answered not_found after the check verified leaves it verified', async () => {
    let answerPoll!: () => void;
    const pollHeld = new Promise<void>((resolve) => (answerPoll = resolve));
    // The status poll is slow: it is answered only after the check.
    const fetch: FetchLike = async (url, init) => {
      if (url.includes('/status/')) await pollHeld;
      return harness.routes.fetch(url, init);
    };
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
    harness.routes.on('GET /status', problem(404, 'not_found'));
    harness.routes.on('POST /check', {
      status: 200,
      body: { verification_id: 'VID-1', status: 'verified', verified: true },
    });
    const c = harness.client({ fetch });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    await jest.advanceTimersByTimeAsync(2500);
    await c.check('123456');
    expect(c.getState().phase).toBe('verified');
    answerPoll();
    await jest.advanceTimersByTimeAsync(0);
    expect(harness.routes.count('GET /status')).toBe(1);
    expect(c.getState()).toMatchObject({ phase: 'verified', error: null });
  });
});

describe('VerificationClient: a call answered after a cancel, over a fetch that does not abort', () => {
  const harness = clientHarness();

  /** A fetch that holds `route`'s answers until released, and answers whatever the signal says (a host's own fetch may not abort). */
  function heldFetch(route: string): { fetch: FetchLike; release: () => void } {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const fetch: FetchLike = async (url, init) => {
      if (url.endsWith(route)) await held;
      return harness.routes.fetch(url, { ...init, signal: new AbortController().signal });
    };
    return { fetch, release };
  }

  it.each([
    [
      'a check verified',
      '/check',
      { status: 200, body: { verification_id: 'VID-1', status: 'verified', verified: true } },
    ],
    ['a check refused', '/check', problem(400, 'invalid_code', { attempts_remaining: 2 })],
    [
      'a switch answered',
      '/switch',
      { status: 201, body: { verification_id: 'VID-1', method: 'flash_call', status: 'sent' } },
    ],
  ] as const)('%s after the cancel: the state stays canceled', async (_, route, reply) => {
    const { fetch, release } = heldFetch(route);
    harness.routes.on('POST /start', {
      status: 201,
      body: answer(harness.routes, { switch_methods: ['flash_call'] }),
    });
    harness.routes.on(`POST ${route}`, reply);
    harness.routes.on('POST /cancel', canceled());
    const c = harness.client({ fetch });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    const call = route === '/check' ? c.check('123456') : c.switchMethod('flash_call');
    await c.cancel();
    release();
    await call;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(c.getState()).toMatchObject({ phase: 'canceled', verificationId: null, error: null });
    expect(harness.routes.count('GET /status')).toBe(0);
  });
});

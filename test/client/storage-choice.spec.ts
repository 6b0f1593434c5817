import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { answer, clientHarness, MemoryStorage } from './fake-routes.js';

/**
 * Where a client keeps its verification for a reload, on a page that has sessionStorage: the page's
 * own when `storage` is left out, nowhere when the host says `storage: null` (a shared kiosk, a page
 * that must keep nothing), and the host's own store when it gives one.
 */
describe('VerificationClient storage: left out, null or given', () => {
  const harness = clientHarness();
  const KEY = 'nestjs-phone-verification';
  let page: MemoryStorage;
  const globals = globalThis as { sessionStorage?: unknown };

  beforeEach(() => {
    page = new MemoryStorage();
    globals.sessionStorage = page;
    harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
  });
  afterEach(() => {
    delete globals.sessionStorage;
  });

  it("left out: the page's sessionStorage keeps the verification", async () => {
    const c = harness.client({ storage: undefined });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(JSON.parse(page.getItem(KEY)!)).toMatchObject({ id: 'VID-1', method: 'sms' });
  });

  it("null: nothing is written to the page's sessionStorage, and a reload has nothing to resume", async () => {
    const c = harness.client({ storage: null });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', verificationId: 'VID-1' });
    expect(page.items.size).toBe(0);

    // What another tab left in the page's storage is not read either.
    page.setItem(KEY, JSON.stringify({ id: 'VID-7', method: 'sms', phone: '+79123456789' }));
    await expect(harness.client({ storage: null }).resume()).resolves.toBe(false);
    expect(harness.routes.count('GET /status')).toBe(0);
  });

  it('left out, on a page whose sessionStorage throws on access (a sandboxed frame): the verification goes on, a reload has nothing to resume', async () => {
    Object.defineProperty(globalThis, 'sessionStorage', {
      configurable: true,
      get: () => {
        throw new DOMException('The document is sandboxed', 'SecurityError');
      },
    });
    const c = harness.client({ storage: undefined });
    await c.start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(c.getState()).toMatchObject({ phase: 'awaiting_user', verificationId: 'VID-1', error: null });
    await expect(harness.client({ storage: undefined }).resume()).resolves.toBe(false);
    expect(harness.routes.count('GET /status')).toBe(0);
  });

  it("given: the host's storage keeps it, the page's none", async () => {
    const own = new MemoryStorage();
    await harness.client({ storage: own }).start({ phoneNumber: '+79123456789', method: 'sms' });
    expect(own.items.size).toBe(1);
    expect(page.items.size).toBe(0);
  });
});

describe('VerificationClient resume: a kept verification without its number', () => {
  const harness = clientHarness();

  it('is followed, but offers no resend: nothing is sent for a number it does not have', async () => {
    harness.storage.setItem('nestjs-phone-verification', JSON.stringify({ id: 'VID-1', method: 'sms' }));
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes) });
    const c = harness.client();
    expect(await c.resume()).toBe(true);
    await jest.advanceTimersByTimeAsync(120_000);
    expect(c.getState()).toMatchObject({ verificationId: 'VID-1', canResend: false });
    await c.resend();
    expect(c.getState().error).toMatchObject({ code: 'resend_unavailable' });
    expect(harness.routes.count('POST /start')).toBe(0);
  });
});

describe('VerificationClient resume: a kept entry another script or an older version damaged', () => {
  const harness = clientHarness();
  const KEY = 'nestjs-phone-verification';

  it.each([
    ['an id that is not a string', { id: 7, method: 'sms', phone: '+79123456789' }],
    ['no id', { method: 'sms', phone: '+79123456789' }],
  ])('with %s: not resumed, nothing asked', async (_name, kept) => {
    harness.storage.setItem(KEY, JSON.stringify(kept));
    const c = harness.client();
    await expect(c.resume()).resolves.toBe(false);
    expect(harness.routes.count('GET /status')).toBe(0);
    expect(c.getState()).toMatchObject({ phase: 'idle', verificationId: null });
  });

  it('not JSON: not resumed, nothing asked', async () => {
    harness.storage.setItem(KEY, '{"id":"VID-1",');
    await expect(harness.client().resume()).resolves.toBe(false);
    expect(harness.routes.count('GET /status')).toBe(0);
  });

  it('without a method that is a string: not resumed, nothing asked', async () => {
    harness.storage.setItem(KEY, JSON.stringify({ id: 'VID-1', method: 42, phone: '+79123456789' }));
    await expect(harness.client().resume()).resolves.toBe(false);
    expect(harness.routes.count('GET /status')).toBe(0);
  });

  it('a number or a journey token that is not a string is left out: no resend for it, no token sent', async () => {
    harness.storage.setItem(
      KEY,
      JSON.stringify({ id: 'VID-1', method: 'sms', phone: 79123456789, token: { forged: true } }),
    );
    harness.routes.on('GET /status', { status: 200, body: answer(harness.routes) });
    const c = harness.client();
    expect(await c.resume()).toBe(true);
    expect(harness.routes.requests.find((r) => r.route === 'GET /status')?.url).not.toContain(
      'journey_token',
    );
    await jest.advanceTimersByTimeAsync(120_000);
    expect(c.getState()).toMatchObject({ verificationId: 'VID-1', canResend: false });
    await c.resend();
    expect(harness.routes.count('POST /start')).toBe(0);
    expect(JSON.parse(harness.storage.getItem(KEY)!)).not.toHaveProperty('token');
  });
});

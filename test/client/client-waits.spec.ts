import { describe, expect, it, jest } from '@jest/globals';
import { answer, clientHarness, problem } from './fake-routes.js';

/**
 * Every 429 the routes send carries a wait (`Retry-After`), whatever its error code: the browser client
 * counts it down and sends nothing during it, then clears it, at its bound and not a second (the client's tick) before.
 */
describe('VerificationClient: the waits of 429 answers', () => {
  const harness = clientHarness();

  it.each(['too_many_wrong_codes', 'rate_limit_exceeded'])(
    'a check answered 429 %s with Retry-After: 30: counted down, a check during it sends nothing, cleared at 30 s',
    async (code) => {
      harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
      harness.routes.on(
        'POST /check',
        { ...problem(429, code), headers: { 'Retry-After': '30' } },
        { status: 200, body: { verification_id: 'VID-1', status: 'verified', verified: true } },
      );
      const c = harness.client();
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      await c.check('123456');
      expect(c.getState()).toMatchObject({ phase: 'awaiting_user', retryInMs: 30_000 });
      expect(c.getState().error).toMatchObject({ code, status: 429, retryAfterMs: 30_000 });

      await jest.advanceTimersByTimeAsync(10_000);
      expect(c.getState().retryInMs).toBe(20_000);
      await c.check('123456');
      expect(harness.routes.count('POST /check')).toBe(1);

      // The page's countdown is whole seconds (its tick): a second before the bound the wait still holds.
      await jest.advanceTimersByTimeAsync(19_000);
      expect(c.getState()).toMatchObject({ retryInMs: 1000, error: { code } });
      await jest.advanceTimersByTimeAsync(1000);
      expect(c.getState()).toMatchObject({ error: null, retryInMs: null });
      await c.check('123456');
      expect(harness.routes.count('POST /check')).toBe(2);
      expect(c.getState().phase).toBe('verified');
    },
  );

  it.each([
    ['behind', -30_000],
    ['ahead of', 30_000],
  ])(
    "the server's clock 30 s %s the device's: a Retry-After: 30 wait is 30 s on the page, counted on the server's clock",
    async (_name, offsetMs) => {
      harness.routes.offsetMs = offsetMs;
      harness.routes.on('POST /start', { status: 201, body: answer(harness.routes) });
      harness.routes.on(
        'POST /check',
        { ...problem(429, 'rate_limit_exceeded'), headers: { 'Retry-After': '30' } },
        { status: 200, body: { verification_id: 'VID-1', status: 'verified', verified: true } },
      );
      const c = harness.client();
      await c.start({ phoneNumber: '+79123456789', method: 'sms' });
      await c.check('123456');
      expect(c.getState()).toMatchObject({ phase: 'awaiting_user', retryInMs: 30_000 });
      expect(c.getState().error!.retryUntil! - c.now()).toBeGreaterThan(29_000);
      expect(c.getState().error!.retryUntil! - c.now()).toBeLessThanOrEqual(30_000);

      await jest.advanceTimersByTimeAsync(29_000);
      await c.check('123456');
      expect(harness.routes.count('POST /check')).toBe(1);
      await jest.advanceTimersByTimeAsync(1000);
      expect(c.getState()).toMatchObject({ error: null, retryInMs: null });
      await c.check('123456');
      expect(harness.routes.count('POST /check')).toBe(2);
      expect(c.getState().phase).toBe('verified');
    },
  );
});

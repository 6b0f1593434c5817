import { describe, expect, it } from '@jest/globals';
import type { StartContext } from '../../src/options/verification.options.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import {
  freshBrowser,
  freshIp,
  freshPhone,
  protectedHost,
  refusal,
  start,
  startFrom,
  protectionFixture,
} from './protection-host.js';

type Headers = Record<string, string | string[] | undefined>;
const headersOf = (request: unknown): Headers => (request as { headers: Headers }).headers;

describe.each(ONE_PLATFORM)('beforeStart hook (%s)', (platform) => {
  const fx = protectionFixture();

  it('a refusal is 403 start_refused with the fx.host reason; nothing is counted or sent', async () => {
    fx.host = await protectedHost(fx.sb, platform, {
      startPerIp: { points: 1, windowMs: 3_600_000 },
      beforeStart: async (ctx) =>
        headersOf(ctx.request)['x-captcha'] === 'ok' ? undefined : { allow: false, reason: 'captcha_failed' },
    });
    const ip = freshIp();
    const phone = freshPhone();
    const posts = fx.sb.requestCount('POST /v1/verify');
    for (let i = 0; i < 3; i++) {
      const refused = await startFrom(fx.host, ip, phone);
      expect(refusal(refused)).toEqual({
        status: 403,
        errorCode: 'start_refused',
        reason: 'captcha_failed',
        retryAfter: null,
      });
      expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);
    // Neither the IP's only start nor the phone's cooldown was used by the refusals.
    const passed = await startFrom(fx.host, ip, phone, 'sms', { 'x-captcha': 'ok' });
    expect(passed.status).toBe(201);
    expect(passed.body.resumed).toBe(false);
  });

  it("a browser's refused start holds nothing of its own: the same browser's identical start is asked again and served", async () => {
    fx.host = await protectedHost(fx.sb, platform, {
      beforeStart: async (ctx) =>
        headersOf(ctx.request)['x-captcha'] === 'ok' ? undefined : { allow: false, reason: 'captcha_failed' },
    });
    // A browser key (its cookie): identical starts of this browser coalesce, a refused one included.
    const [ip, phone, browser] = [freshIp(), freshPhone(), freshBrowser()];
    const posts = fx.sb.requestCount('POST /v1/verify');
    for (let i = 0; i < 2; i++)
      expect(refusal(await startFrom(fx.host, ip, phone, 'sms', browser))).toMatchObject({
        status: 403,
        reason: 'captcha_failed',
      });
    const passed = await startFrom(fx.host, ip, phone, 'sms', { ...browser, 'x-captcha': 'ok' });
    expect({ status: passed.status, resumed: passed.body.resumed }).toEqual({ status: 201, resumed: false });
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts + 1);
    // The session it started is the one its next identical start is handed back.
    const again = await startFrom(fx.host, ip, phone, 'sms', { ...browser, 'x-captcha': 'ok' });
    expect(again.body).toMatchObject({ verification_id: passed.body.verification_id, resumed: true });
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts + 1);
  });

  it('gets the normalised attempt: E.164 number, method, client IP, owner and the raw request', async () => {
    const seen: StartContext[] = [];
    fx.host = await protectedHost(
      fx.sb,
      platform,
      {
        beforeStart: (ctx) => {
          seen.push(ctx);
          return true;
        },
      },
      { owner: (req) => headersOf(req)['x-user-id'] as string | undefined },
    );
    const ip = freshIp();
    const res = await start(
      fx.host,
      { phone_number: '8 (916) 555-01-23', method: 'msgr1' },
      { 'x-forwarded-for': ip, 'x-user-id': 'u-42' },
    );
    expect(res.status).toBe(201);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ phoneNumber: '+79165550123', method: 'msgr1_otp', ip, owner: 'u-42' });
    expect(headersOf(seen[0].request)['x-user-id']).toBe('u-42');
  });

  it('on a switch, gets the method it leaves as switchedFrom and the one it goes to as method', async () => {
    const seen: StartContext[] = [];
    fx.host = await protectedHost(fx.sb, platform, {
      beforeStart: (ctx) => {
        seen.push(ctx);
        return true;
      },
    });
    const ip = freshIp();
    const phone = freshPhone();
    const first = await startFrom(fx.host, ip, phone, 'sms');
    expect(first.status).toBe(201);
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toHaveProperty('switchedFrom');

    const moved = await call(
      fx.host.url,
      'POST',
      '/verification/switch',
      { verification_id: first.body.verification_id, method: 'flash_call' },
      { 'x-forwarded-for': ip },
    );
    expect(moved.status).toBe(201);
    expect(moved.body.method).toBe('flash_call');
    expect(seen).toHaveLength(2);
    expect(seen[1]).toMatchObject({ phoneNumber: phone, method: 'flash_call', switchedFrom: 'sms', ip });
  });

  it('is not called for invalid input, and a double-click with a single-use captcha token is served once, not refused', async () => {
    const used = new Set<string>();
    let calls = 0;
    fx.host = await protectedHost(fx.sb, platform, {
      beforeStart: (ctx) => {
        calls += 1;
        const token = String(headersOf(ctx.request)['x-captcha']);
        if (used.has(token)) return { allow: false, reason: 'captcha_reused' };
        used.add(token);
        return { allow: true };
      },
    });
    expect((await start(fx.host, { phone_number: 'nope', method: 'sms' })).status).toBe(400);
    expect((await start(fx.host, { phone_number: '+78091234567', method: 'sms' })).status).toBe(400);
    expect(calls).toBe(0);

    const ip = freshIp();
    const phone = freshPhone();
    const browser = freshBrowser();
    const clicks = await Promise.all(
      [1, 2].map(() => startFrom(fx.host!, ip, phone, 'sms', { 'x-captcha': 'token-1', ...browser })),
    );
    expect(clicks.map((r) => r.status)).toEqual([201, 201]);
    expect(clicks.map((r) => r.body.resumed).sort()).toEqual([false, true]);
    expect(calls).toBe(1);
    expect(fx.sb.sessionsFor(phone)).toHaveLength(1);
  });

  it('a hook that throws fails closed: 503 before_start_failed, nothing sent, its message not shown', async () => {
    fx.host = await protectedHost(fx.sb, platform, {
      beforeStart: () => {
        throw new Error('captcha provider down: secret-token-xyz');
      },
    });
    const posts = fx.sb.requestCount('POST /v1/verify');
    const res = await startFrom(fx.host, freshIp(), freshPhone());
    expect(refusal(res)).toEqual({
      status: 503,
      errorCode: 'service_unavailable',
      reason: 'before_start_failed',
      retryAfter: '5',
    });
    expect(res.text).not.toContain('secret-token-xyz');
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);
  });

  it('a reason that is not a short code is replaced by "refused"; false refuses too', async () => {
    let verdict: unknown = { allow: false, reason: '<script>alert(1)</script>' };
    fx.host = await protectedHost(fx.sb, platform, {
      beforeStart: () => verdict as { allow: false; reason: string },
    });
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone())).reason).toBe('refused');
    verdict = false;
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone()))).toMatchObject({
      status: 403,
      reason: 'refused',
    });
    verdict = 'yes please';
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone()))).toMatchObject({
      status: 503,
      reason: 'before_start_failed',
    });
  });

  it('still runs with limits.enabled: false (it is the fx.host rule, not a module limit)', async () => {
    fx.host = await protectedHost(fx.sb, platform, {
      enabled: false,
      beforeStart: () => ({ allow: false, reason: 'maintenance' }),
    });
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone())).reason).toBe('maintenance');
  });
});

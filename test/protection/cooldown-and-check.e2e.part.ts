import { describe, expect, it } from '@jest/globals';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import {
  check,
  cookieFrom,
  freshIp,
  freshPhone,
  protectedHost,
  refusal,
  retryAfterRange,
  startFrom,
  timed,
  protectionFixture,
} from './protection-host.js';

describe.each(ONE_PLATFORM)('resend cooldown (%s)', (platform) => {
  const fx = protectionFixture();

  it("resend_available_at is 60 s after the start; before it the caller's next start to the number by the same method is 429 resend_cooldown, after it a resend goes out; another method is not a resend", async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const phone = freshPhone();
    const ip = freshIp();
    const [first, sentAt, receivedAt] = await timed(fx.sb, () => startFrom(fx.host!, ip, phone));
    expect(first.status).toBe(201);
    const browser = cookieFrom(first);
    const availableAt = Date.parse(String(first.body.resend_available_at));
    expect(availableAt).toBeGreaterThanOrEqual(sentAt + 60_000);
    expect(availableAt).toBeLessThanOrEqual(receivedAt + 60_000);

    await fx.sb.advance(30_000);
    // Another method is not a resend (a user giving up on the SMS for a call): it goes out at once.
    const other = await startFrom(fx.host, ip, phone, 'flash_call', browser);
    expect(other.body).toMatchObject({ status: 'sent', resumed: false });
    // The SMS verified: it is no longer handed back, and a new SMS by the same caller is a resend.
    const sms = fx.sb.sessionsFor(phone).find((s) => s.method === 'sms')!;
    await fx.sb.deliver(sms.request_id);
    const code = String(fx.sb.getSession(sms.request_id)!.code);
    expect((await check(fx.host, ip, first.body.verification_id, code)).body.verified).toBe(true);
    const posts = fx.sb.requestCount('POST /v1/verify');
    // It started the first one, so it gets exact timing.
    const [again, againSent, againReceived] = await timed(fx.sb, () =>
      startFrom(fx.host!, ip, phone, 'sms', browser),
    );
    expect(refusal(again)).toMatchObject({
      status: 429,
      errorCode: 'rate_limit_exceeded',
      reason: 'resend_cooldown',
    });
    expect(again.body.resend_available_at).toBe(first.body.resend_available_at);
    expect(retryAfterRange(availableAt, availableAt, againSent, againReceived)).toContain(
      Number(again.headers.get('retry-after')),
    );
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);

    // The sandbox clock also runs in real time: the boundary is probed with a margin of a request's duration.
    await fx.sb.advance(availableAt - fx.sb.now() - 250);
    expect(refusal(await startFrom(fx.host, ip, phone, 'sms', browser)).reason).toBe('resend_cooldown');
    await fx.sb.advance(Math.max(availableAt - fx.sb.now(), 0));
    const resend = await startFrom(fx.host, ip, phone, 'sms', browser);
    expect(resend.status).toBe(201);
    expect(resend.body.resumed).toBe(false);
    expect(resend.body.verification_id).not.toBe(first.body.verification_id);
    expect(Date.parse(String(resend.body.resend_available_at))).toBeGreaterThanOrEqual(availableAt + 60_000);
    expect(fx.sb.sessionsFor(phone)).toHaveLength(3);
  });

  it("a browser that switched gets its switch's exact resend_available_at back, as after a start; another browser behind its IP does not", async () => {
    fx.host = await protectedHost(fx.sb, platform, { coalesceStarts: false });
    const phone = freshPhone();
    const ip = freshIp();
    const first = await startFrom(fx.host, ip, phone, 'sms');
    expect(first.status).toBe(201);
    const browser = cookieFrom(first);
    expect(browser).toHaveProperty('cookie');

    await fx.sb.advance(5_000);
    const moved = await call(
      fx.host.url,
      'POST',
      '/verification/switch',
      { verification_id: first.body.verification_id, method: 'flash_call' },
      { 'x-forwarded-for': ip, ...browser },
    );
    expect(moved.body).toMatchObject({ method: 'flash_call', resumed: false });
    expect(moved.body.resend_available_at).toEqual(expect.any(String));

    // The same browser starting the switched-to method again: a resend in its cooldown, told exactly when.
    const again = await startFrom(fx.host, ip, phone, 'flash_call', browser);
    expect(refusal(again)).toMatchObject({ status: 429, reason: 'resend_cooldown' });
    expect(again.body.resend_available_at).toBe(moved.body.resend_available_at);
    // Another browser behind the same IP is held by the same cooldown, but not told when it began.
    const stranger = await startFrom(fx.host, ip, phone, 'flash_call');
    expect(refusal(stranger)).toMatchObject({ status: 429, reason: 'resend_cooldown' });
    expect(stranger.body).not.toHaveProperty('resend_available_at');
  });

  it("another caller's start is not held back by the cooldown: a stranger cannot keep the owner waiting", async () => {
    fx.host = await protectedHost(
      fx.sb,
      platform,
      {},
      { owner: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-user-id'] },
    );
    const phone = freshPhone();
    const ip = freshIp();
    const stranger = await startFrom(fx.host, ip, phone, 'sms', { 'x-user-id': 'mallory' });
    expect(stranger.status).toBe(201);
    // The owner, seconds later, from the same IP too: their own start, with their own cooldown.
    await fx.sb.advance(5000);
    const [owner, sentAt, receivedAt] = await timed(fx.sb, () =>
      startFrom(fx.host!, ip, phone, 'sms', { 'x-user-id': 'alice' }),
    );
    expect(owner.body).toMatchObject({ status: 'sent', resumed: false });
    const availableAt = Date.parse(String(owner.body.resend_available_at));
    expect(availableAt).toBeGreaterThanOrEqual(sentAt + 60_000);
    expect(availableAt).toBeLessThanOrEqual(receivedAt + 60_000);
    // Each caller's own repeat is still paced: once the stranger's SMS ended (so it is not handed
    // back), the stranger's next SMS to the number waits out the stranger's own cooldown.
    const strangers = fx.sb.sessionsFor(phone).at(-1)!; // newest first: the stranger's came first
    await fx.sb.deliver(strangers.request_id);
    const code = String(fx.sb.getSession(strangers.request_id)!.code);
    expect(
      (
        await call(
          fx.host.url,
          'POST',
          '/verification/check',
          { verification_id: stranger.body.verification_id, code },
          { 'x-forwarded-for': ip, 'x-user-id': 'mallory' },
        )
      ).body.verified,
    ).toBe(true);
    expect(refusal(await startFrom(fx.host, ip, phone, 'sms', { 'x-user-id': 'mallory' })).reason).toBe(
      'resend_cooldown',
    );
    expect(fx.sb.sessionsFor(phone)).toHaveLength(2);
  });

  it('a double-click inside the cooldown is served the same session, not refused', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const phone = freshPhone();
    const ip = freshIp();
    const first = await startFrom(fx.host, ip, phone);
    await fx.sb.advance(5000);
    const again = await startFrom(fx.host, ip, phone, 'sms', cookieFrom(first));
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({
      resumed: true,
      resend_available_at: first.body.resend_available_at,
      expires_at: first.body.expires_at,
    });
    expect(fx.sb.sessionsFor(phone)).toHaveLength(1);
    // A handle of the same session (handles are sealed afresh each time): the code checks through it.
    const [session] = fx.sb.sessionsFor(phone);
    await fx.sb.deliver(session.request_id);
    const verified = await check(
      fx.host,
      ip,
      again.body.verification_id,
      String(fx.sb.getSession(session.request_id)!.code),
    );
    expect(verified.body).toMatchObject({ verified: true });
  });

  it('a custom cooldown holds at its boundary', async () => {
    fx.host = await protectedHost(fx.sb, platform, { resendCooldownMs: 15_000 });
    const phone = freshPhone();
    const ip = freshIp();
    const first = await startFrom(fx.host, ip, phone);
    const availableAt = Date.parse(String(first.body.resend_available_at));
    await fx.sb.advance(availableAt - fx.sb.now() - 250);
    // No cookie: each start is a new browser, never handed the first one back; the caller (its IP) is the same.
    expect(refusal(await startFrom(fx.host, ip, phone, 'sms')).reason).toBe('resend_cooldown');
    await fx.sb.advance(Math.max(availableAt - fx.sb.now(), 0));
    expect((await startFrom(fx.host, ip, phone, 'sms')).status).toBe(201);
  });

  it('switched off: no resend_available_at and no cooldown', async () => {
    fx.host = await protectedHost(fx.sb, platform, { resendCooldownMs: false });
    const phone = freshPhone();
    const first = await startFrom(fx.host, freshIp(), phone);
    expect(first.body.resend_available_at).toBeNull();
    expect((await startFrom(fx.host, freshIp(), phone)).status).toBe(201);
  });

  it('is lifted when the API answered that nothing was sent, and kept when the outcome is unknown', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const phone = freshPhone();
    const ip = freshIp();
    fx.sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 500 });
    expect((await startFrom(fx.host, ip, phone)).status).toBe(503);
    expect((await startFrom(fx.host, ip, phone)).status).toBe(201);

    const other = freshPhone();
    fx.sb.addFault({ route: 'POST /v1/verify', kind: 'reset' });
    expect((await startFrom(fx.host, ip, other)).status).toBe(503);
    expect(refusal(await startFrom(fx.host, ip, other)).reason).toBe('resend_cooldown');
  });
});

describe.each(ONE_PLATFORM)('check limit (%s)', (platform) => {
  const fx = protectionFixture();

  it('the 30th check passes, the 31st is 429 check_limit with Retry-After, and the 10-minute window resets', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const ip = freshIp();
    const phone = freshPhone();
    const started = await startFrom(fx.host, ip, phone);
    const id = started.body.verification_id;
    const [, opened, openedBy] = await timed(fx.sb, () => check(fx.host!, ip, id, '000000'));
    for (let i = 2; i <= 30; i++) expect((await check(fx.host, ip, id, '000000')).status).not.toBe(429);
    const checks = fx.sb.requestCount('POST /v1/verify/check');
    const [refused, sentAt, receivedAt] = await timed(fx.sb, () => check(fx.host!, ip, id, '000000'));
    expect(refusal(refused)).toMatchObject({
      status: 429,
      errorCode: 'rate_limit_exceeded',
      reason: 'check_limit',
    });
    expect(retryAfterRange(opened + 600_000, openedBy + 600_000, sentAt, receivedAt)).toContain(
      Number(refused.headers.get('retry-after')),
    );
    expect(fx.sb.requestCount('POST /v1/verify/check')).toBe(checks);
    // Another client's checks are not affected.
    expect((await check(fx.host, freshIp(), id, '000000')).status).not.toBe(429);

    await fx.sb.advance(openedBy + 600_000 - fx.sb.now() - 1000);
    expect((await check(fx.host, ip, id, '000000')).status).toBe(429);
    await fx.sb.advance(1000);
    const fresh = await startFrom(fx.host, ip, freshPhone());
    const session = fx.sb.sessionsFor(String(fresh.body.phone_number))[0];
    await fx.sb.deliver(session.request_id);
    const ok = await check(
      fx.host,
      ip,
      fresh.body.verification_id,
      String(fx.sb.getSession(session.request_id)!.code),
    );
    expect(ok.body).toMatchObject({ verified: true });
  });

  it('malformed checks (bad handle, bad code format) are not counted', async () => {
    fx.host = await protectedHost(fx.sb, platform, { checkPerIp: { points: 2, windowMs: 600_000 } });
    const ip = freshIp();
    const started = await startFrom(fx.host, ip, freshPhone());
    const id = started.body.verification_id;
    for (let i = 0; i < 5; i++) {
      expect((await check(fx.host, ip, id, 'abc')).body.error_code).toBe('validation_error');
      expect((await check(fx.host, ip, 'forged-handle', '123456')).body.error_code).toBe('not_found');
      expect(
        (
          await call(
            fx.host.url,
            'POST',
            '/verification/check',
            { code: '123456' },
            { 'x-forwarded-for': ip },
          )
        ).status,
      ).toBe(400);
    }
    expect((await check(fx.host, ip, id, '000000')).status).toBe(400);
    expect((await check(fx.host, ip, id, '000000')).status).toBe(400);
    expect(refusal(await check(fx.host, ip, id, '000000')).reason).toBe('check_limit');
  });

  it('switched off: checks are not limited', async () => {
    fx.host = await protectedHost(fx.sb, platform, { checkPerIp: false, startPerIp: false });
    const ip = freshIp();
    for (let i = 0; i < 12; i++) {
      const started = await startFrom(fx.host, ip, freshPhone());
      for (let j = 0; j < 3; j++)
        expect((await check(fx.host, ip, started.body.verification_id, '000000')).status).not.toBe(429);
    }
  });
});

import { describe, expect, it } from '@jest/globals';
import { ONE_PLATFORM } from '../support/verification-app.js';
import {
  check,
  cookieFrom,
  freshBrowser,
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  refusal,
  startFrom,
  timed,
} from './protection-host.js';

/**
 * What a refusal tells a caller who did not start the verification it is about: never when that
 * verification started (no `resend_available_at`, no exact `Retry-After`). The starter keeps exact
 * timing. Per-number ceilings: test/protection/start-limits and wrong-codes (coarse waits).
 */
describe.each(ONE_PLATFORM)("another caller's verification timing (%s)", (platform) => {
  const fx = protectionFixture();

  it("a stranger who starts a number someone is verifying learns nothing of that verification's start", async () => {
    fx.host = await protectedHost(
      fx.sb,
      platform,
      {},
      { owner: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-user-id'] },
    );
    const phone = freshPhone();
    const alice = await startFrom(fx.host, freshIp(), phone, 'sms', { 'x-user-id': 'alice' });
    const aliceAvailableAt = String(alice.body.resend_available_at);
    await fx.sb.advance(17_000);
    const [stranger, sentAt, receivedAt] = await timed(fx.sb, () =>
      startFrom(fx.host!, freshIp(), phone, 'sms', { 'x-user-id': 'mallory' }),
    );
    // Their own start, timed from their own request only.
    expect(stranger.status).toBe(201);
    expect(stranger.text).not.toContain(aliceAvailableAt);
    const strangerAvailableAt = Date.parse(String(stranger.body.resend_available_at));
    expect(strangerAvailableAt).toBeGreaterThanOrEqual(sentAt + 60_000);
    expect(strangerAvailableAt).toBeLessThanOrEqual(receivedAt + 60_000);
    expect(stranger.headers.get('retry-after')).toBeNull();
  });

  it('without an owner, another browser behind the same IP is refused by the cooldown with neither resend_available_at nor an exact Retry-After; the starter gets both', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const phone = freshPhone();
    const natIp = freshIp();
    const first = await startFrom(fx.host, natIp, phone);
    const availableAt = Date.parse(String(first.body.resend_available_at));
    // The user verified: the session is no longer handed back, so its own browser is refused too.
    const [session] = fx.sb.sessionsFor(phone);
    await fx.sb.deliver(session!.request_id);
    const code = String(fx.sb.getSession(session!.request_id)!.code);
    expect((await check(fx.host, natIp, first.body.verification_id, code)).body.verified).toBe(true);
    for (const elapsed of [13_000, 31_000]) {
      await fx.sb.advance(elapsed - (fx.sb.now() - (availableAt - 60_000)));
      for (const neighbour of [{}, freshBrowser()]) {
        const refused = await startFrom(fx.host, natIp, phone, 'sms', neighbour);
        expect(refusal(refused)).toMatchObject({ status: 429, reason: 'resend_cooldown', retryAfter: '60' });
        expect(refused.body).not.toHaveProperty('resend_available_at');
      }
      const own = await startFrom(fx.host, natIp, phone, 'sms', cookieFrom(first));
      expect(refusal(own)).toMatchObject({ status: 429, reason: 'resend_cooldown' });
      expect(own.body.resend_available_at).toBe(first.body.resend_available_at);
      expect(Number(own.headers.get('retry-after'))).toBeLessThan(60);
    }
  });
});

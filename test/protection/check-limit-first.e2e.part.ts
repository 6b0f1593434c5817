/**
 * A check's limit answers before its journey: the journey is read with the check limit (one store
 * round trip), and a caller past the limit learns nothing of the handle (429, not 404); a check
 * carrying a `journey_token` past it rebuilds nothing (no upstream read, nothing adopted).
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { freshIp, freshPhone, protectedHost, protectionFixture, startFrom } from './protection-host.js';

const SESSION_READS = 'GET /v1/verify/:id';

describe.each(ONE_PLATFORM)('the check limit before the journey (%s)', (platform) => {
  const fx = protectionFixture();

  it('past the limit a forgotten handle answers 429 check_limit, within it 404', async () => {
    fx.host = await protectedHost(fx.sb, platform, { checkPerIp: { points: 1, windowMs: 600_000 } });
    const ip = freshIp();
    const [gone, kept] = [freshPhone(), freshPhone()];
    const idOf = async (phone: string) => String((await startFrom(fx.host!, ip, phone)).body.verification_id);
    const [goneId, keptId] = [await idOf(gone), await idOf(kept)];
    // Forgetting a number forgets its callers' counters too (this client's check limit among them).
    await fx.host.app.get(VerificationErasure, { strict: false }).forget({ phoneNumber: gone });
    const check = (id: string) =>
      call(
        fx.host!.url,
        'POST',
        '/verification/check',
        { verification_id: id, code: '0000' },
        { 'x-forwarded-for': ip },
      );
    expect((await check(keptId)).status).toBe(400);
    const refused = await check(goneId);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error_code: 'rate_limit_exceeded', reason: 'check_limit' });
    // Another client, within its limit, is told the handle opens nothing.
    const other = await call(
      fx.host.url,
      'POST',
      '/verification/check',
      { verification_id: goneId, code: '0000' },
      { 'x-forwarded-for': freshIp() },
    );
    expect(other.status).toBe(404);
  });

  it('past the limit a check with a journey_token after a restart is 429 before the journey is rebuilt: nothing read upstream, nothing adopted', async () => {
    const limits = { checkPerIp: { points: 1, windowMs: 600_000 } };
    const extra: Partial<VerificationModuleOptions> = {
      owner: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-user'],
    };
    const ip = freshIp();
    const as = (from: string) => ({ 'x-forwarded-for': from, 'x-user': 'user-1' });
    const post = (route: string, body: Record<string, unknown>, from = ip) =>
      call(fx.host!.url, 'POST', `/verification/${route}`, body, as(from));
    fx.host = await protectedHost(fx.sb, platform, limits, extra);
    const started = await startFrom(fx.host, ip, freshPhone(), 'sms', { 'x-user': 'user-1' });
    const id = String(started.body.verification_id);
    const moved = await post('switch', { verification_id: id, method: 'flash_call' });
    const token = String(moved.body.journey_token);
    // A restart on a fresh MemoryStore: the journey is lost, the frontend still holds its handle and token.
    await fx.host.close();
    fx.host = await protectedHost(fx.sb, platform, limits, extra);
    const other = await startFrom(fx.host, ip, freshPhone(), 'sms', { 'x-user': 'user-1' });
    expect((await post('check', { verification_id: other.body.verification_id, code: '0000' })).status).toBe(
      400,
    );
    const reads = fx.sb.requestCount(SESSION_READS);
    const refused = await post('check', { verification_id: id, code: '0000', journey_token: token });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error_code: 'rate_limit_exceeded', reason: 'check_limit' });
    expect(fx.sb.requestCount(SESSION_READS)).toBe(reads);
    // Nothing was adopted: the handle alone still reads only the journey's first step.
    const seen = await call(fx.host.url, 'GET', `/verification/status/${id}`, undefined, as(freshIp()));
    expect(seen.body).toMatchObject({ method: 'sms', methods_tried: ['sms'] });
    // Within its limit, the same check puts the journey back from the token: its steps read upstream.
    const before = fx.sb.requestCount(SESSION_READS);
    const within = await post(
      'check',
      { verification_id: id, code: '0000', journey_token: token },
      freshIp(),
    );
    expect(within.body).toMatchObject({ status: 400, error_code: 'invalid_code' });
    expect(fx.sb.requestCount(SESSION_READS)).toBeGreaterThan(before);
    const back = await call(fx.host.url, 'GET', `/verification/status/${id}`, undefined, as(freshIp()));
    expect(back.body).toMatchObject({ method: 'flash_call', methods_tried: ['sms', 'flash_call'] });
  });
});

/**
 * A check's limit answers before its journey: the journey is read with the check limit (one store
 * round trip), and a caller past the limit learns nothing of the handle (429, not 404).
 */
import { describe, expect, it } from '@jest/globals';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import { freshIp, freshPhone, protectedHost, protectionFixture, startFrom } from './protection-host.js';

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
});

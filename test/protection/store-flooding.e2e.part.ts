import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import {
  check,
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  refusal,
  startFrom,
} from './protection-host.js';

/**
 * Room for a few sessions and the entries each keeps (protection, method figures, the erasure index:
 * about 20 a start), far less than the flood below.
 */
const MAX_ENTRIES = 100;
const FLOOD = 200;

/**
 * One request per address fills a bounded MemoryStore with per-client counters. Those are evictable
 * only among themselves: another number's cooldown and limits and a live session record survive.
 */
describe.each(ONE_PLATFORM)('store flooding with per-client counters (%s)', (platform) => {
  const fx = protectionFixture();

  it(`${FLOOD} checks from ${FLOOD} addresses past maxEntries evict no cooldown, per-phone limit or session`, async () => {
    const store = new MemoryStore({ clock: () => fx.sb.now(), maxEntries: MAX_ENTRIES });
    try {
      fx.host = await protectedHost(
        fx.sb,
        platform,
        { startPerPhone: { points: 1, windowMs: 3_600_000 }, resendCooldownMs: 600_000 },
        { store },
      );
      // The victim's live session, its number's cooldown and per-phone limit.
      const victimPhone = freshPhone();
      const victim = await startFrom(fx.host, freshIp(), victimPhone);
      expect(victim.status).toBe(201);
      // A reverse flash call has no code: checking it is refused (400) without an upstream call, after
      // the check has been counted for the caller's address.
      const flooded = (await startFrom(fx.host, freshIp(), freshPhone(), 'reverse_flash_call')).body
        .verification_id;
      const checks = fx.sb.requestCount('POST /v1/verify/check');
      for (let i = 0; i < FLOOD; i++) {
        const res = await check(fx.host, `203.0.${Math.floor(i / 250)}.${(i % 250) + 1}`, flooded, '1234');
        expect(res.body.error_code).toBe('method_not_available');
      }
      expect(fx.sb.requestCount('POST /v1/verify/check')).toBe(checks);
      expect(store.entryCount).toBeGreaterThan(MAX_ENTRIES);

      // The victim's session is still served, and its number is still protected.
      const status = await call(
        fx.host.url,
        'GET',
        `/verification/status/${String(victim.body.verification_id)}`,
      );
      expect(status.status).toBe(200);
      const again = refusal(await startFrom(fx.host, freshIp(), victimPhone));
      expect(again.status).toBe(429);
      expect(['resend_cooldown', 'start_phone_limit']).toContain(again.reason);
      await fx.sb.advance(600_000);
      // Past the cooldown, the per-phone limit (1 an hour) still holds.
      expect(refusal(await startFrom(fx.host, freshIp(), victimPhone)).reason).toBe('start_phone_limit');
    } finally {
      await fx.host?.close();
      fx.host = undefined;
      await store.close();
    }
  });
});

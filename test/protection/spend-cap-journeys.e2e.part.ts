/**
 * Issue 29: the spend cap counts what the API can charge, so it cannot be filled by starts nobody
 * proves, and a journey's step left pending does not hold it. A reverse flash call (charged only when
 * the number's owner calls) reserves nothing; it is counted when it ends proved. Over real HTTP,
 * default protection but a small cap, sandbox prices (sms 3, flash call 0.80, reverse call 0.25 RUB).
 */
import { describe, expect, it } from '@jest/globals';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  start,
  startFrom,
} from './protection-host.js';

const DAY = 86_400_000;

function switchFrom(
  host: TestApp,
  ip: string,
  verificationId: unknown,
  method?: string,
): ReturnType<typeof call> {
  const body =
    method === undefined ? { verification_id: verificationId } : { verification_id: verificationId, method };
  return call(host.url, 'POST', '/verification/switch', body, { 'x-forwarded-for': ip });
}

describe.each(ONE_PLATFORM)('spend cap and journeys (%s)', (platform) => {
  const fx = protectionFixture();

  it('reverse flash calls nobody makes do not fill the cap: after 48 of them (12 RUB against 10) an SMS is served, and a call made is counted', async () => {
    // The cap alone (the pumping defence would rightly suspect 48 unconverted starts from one address).
    fx.host = await protectedHost(fx.sb, platform, {
      pumping: false,
      startPerIp: false,
      freeStartPerCaller: false,
      spendCap: { amount: 10, windowMs: DAY },
    });
    const ip = freshIp();
    const phones = Array.from({ length: 48 }, () => freshPhone());
    const ids: unknown[] = [];
    for (const phone of phones) {
      const res = await startFrom(fx.host, ip, phone, 'reverse_flash_call');
      expect(res.status).toBe(201);
      ids.push(res.body.verification_id);
    }
    for (let i = 0; i < 3; i++) {
      const sms = await startFrom(fx.host, freshIp(), freshPhone());
      expect({ status: sms.status, method: sms.body.method }).toEqual({ status: 201, method: 'sms' });
    }
    // 9 of 10 RUB: one call made and seen by the module makes it 9.25, and an SMS no longer fits.
    const [callId] = fx.sb.sessionsFor(phones[0]!).map((s) => s.request_id);
    await fx.sb.call(callId!, phones[0]!);
    const seen = await call(fx.host.url, 'GET', `/verification/status/${String(ids[0])}`, undefined, {
      'x-forwarded-for': ip,
    });
    expect(seen.body.status).toBe('verified');
    const refused = await startFrom(fx.host, freshIp(), freshPhone());
    expect({ status: refused.status, reason: refused.body.reason }).toEqual({
      status: 503,
      reason: 'spend_cap',
    });
  });

  it("near the cap's last share, a journey whose reverse call is still pending switches to a method charged on delivery: 201, not 503", async () => {
    // 8.60 RUB: past 6.88 (80 %) only methods charged on proof and known callers. Two SMS take 6.00;
    // the flash call (0.80) fits, the pending reverse call beside it (0.25) would not.
    fx.host = await protectedHost(
      fx.sb,
      platform,
      { spendCap: { amount: 8.6, windowMs: DAY } },
      { methods: ['reverse_flash_call', 'flash_call', 'sms'] },
    );
    for (let i = 0; i < 2; i++) expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    const ip = freshIp();
    const first = await start(
      fx.host,
      { phone_number: freshPhone(), method: 'auto', device: 'mobile' },
      { 'x-forwarded-for': ip },
    );
    expect({ status: first.status, method: first.body.method }).toEqual({
      status: 201,
      method: 'reverse_flash_call',
    });
    // The journey has no method charged on proof left: before issue 29's fix this was 503 spend_cap.
    const moved = await switchFrom(fx.host, ip, first.body.verification_id);
    expect({ status: moved.status, method: moved.body.method }).toEqual({
      status: 201,
      method: 'flash_call',
    });
    // The cap still holds: the next switch (an SMS, 3 RUB) is past its share, and nothing is sent.
    const posts = fx.sb.requestCount('POST /v1/verify');
    const held = await switchFrom(fx.host, ip, first.body.verification_id);
    expect({ status: held.status, error: held.body.error_code, held: held.body.held }).toEqual({
      status: 409,
      error: 'method_held',
      held: 'spend_cap',
    });
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);
  });

  it("past the cap's last share, a journey with no method charged on proof left is graded, not 503: the reverse call is offered again and served", async () => {
    // 10 RUB: past 8 only methods charged on proof and known callers. Two SMS and two flash calls take 7.60.
    fx.host = await protectedHost(
      fx.sb,
      platform,
      { spendCap: { amount: 10, windowMs: DAY } },
      { methods: ['reverse_flash_call', 'flash_call', 'sms'] },
    );
    for (const method of ['sms', 'sms', 'flash_call', 'flash_call'])
      expect((await startFrom(fx.host, freshIp(), freshPhone(), method)).status).toBe(201);
    const ip = freshIp();
    const first = await start(
      fx.host,
      { phone_number: freshPhone(), method: 'auto', device: 'desktop' },
      { 'x-forwarded-for': ip },
    );
    expect(first.body.method).toBe('reverse_flash_call');
    // The user did not call; the fallback (a flash call, 0.80) would pass 8.
    await fx.sb.advance(61_000);
    const posts = fx.sb.requestCount('POST /v1/verify');
    const held = await switchFrom(fx.host, ip, first.body.verification_id);
    expect(held.status).toBe(409);
    expect(held.body).toMatchObject({
      error_code: 'method_held',
      held: 'spend_cap',
      offered_methods: ['reverse_flash_call'],
    });
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);
    // As the browser client does: it moves to the method offered, a new call to place.
    const again = await switchFrom(fx.host, ip, first.body.verification_id, 'reverse_flash_call');
    expect({ status: again.status, method: again.body.method }).toEqual({
      status: 201,
      method: 'reverse_flash_call',
    });
    expect(again.body.number_to_call).toBeDefined();
  });
});

/**
 * Issue 29: graded answers instead of refusals. A suspected start (its range held, the spend cap's
 * last share) is offered only the methods charged on proof: `auto` picks among them, an explicit
 * other method gets 409 `method_held` naming them with `Retry-After`. Over real HTTP, default options.
 */
import { describe, expect, it } from '@jest/globals';
import { ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  start,
  startFrom,
} from './protection-host.js';

let rangeSerial = 0;
/** A fresh range (+7 977 NNN) and its numbers. */
function freshRange(): (i: number) => string {
  rangeSerial += 1;
  const range = `+7977${String((process.pid * 11 + rangeSerial * 41) % 1000).padStart(3, '0')}`;
  return (i) => `${range}${String(i).padStart(4, '0')}`;
}

/** Holds a fresh range: starts of four of its numbers from four addresses, none completed. */
async function heldRange(host: TestApp): Promise<(i: number) => string> {
  const number = freshRange();
  for (let i = 0; i < 4; i++) await startFrom(host, freshIp(), number(i));
  return number;
}

describe.each(ONE_PLATFORM)('graded answers (%s)', (platform) => {
  const fx = protectionFixture();

  it('a held range: an explicit SMS is 409 method_held with Retry-After and the methods charged on proof; auto starts a reverse flash call; an explicit one is served', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const number = await heldRange(fx.host);
    const sent = fx.sb.requestCount('POST /v1/verify');
    const held = await startFrom(fx.host, freshIp(), number(10));
    expect(held.status).toBe(409);
    expect(held.headers.get('content-type')).toContain('application/problem+json');
    expect(held.body).toMatchObject({
      status: 409,
      error_code: 'method_held',
      reason: 'method_held',
      held: 'range_held',
      offered_methods: ['reverse_flash_call', 'msgr2_bot'],
      // What a frontend may show: another method, not "try later" (the rate limit's).
      detail: 'This method is not available for this number now: use one of offered_methods',
    });
    expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(sent);

    const auto = await start(
      fx.host,
      { phone_number: number(10), method: 'auto' },
      { 'x-forwarded-for': freshIp() },
    );
    expect(auto.status).toBe(201);
    expect(auto.body.method).toBe('reverse_flash_call');
    const explicit = await startFrom(fx.host, freshIp(), number(11), 'msgr2_bot');
    expect(explicit.status).toBe(201);
  });

  it('grading off, or no method charged on proof offered: refused as before (429 range_held)', async () => {
    fx.host = await protectedHost(fx.sb, platform, { pumping: { grading: false } });
    let number = await heldRange(fx.host);
    expect((await startFrom(fx.host, freshIp(), number(10))).body.reason).toBe('range_held');
    await fx.host.close();
    fx.host = await protectedHost(fx.sb, platform, {}, { methods: ['sms', 'flash_call'] });
    number = await heldRange(fx.host);
    const refused = await startFrom(fx.host, freshIp(), number(10));
    expect({ status: refused.status, reason: refused.body.reason }).toEqual({
      status: 429,
      reason: 'range_held',
    });
  });

  it('monitor mode reports without acting: nothing is graded, the whole cap is open, the event names subject and rule', async () => {
    fx.host = await protectedHost(fx.sb, platform, {
      pumping: { mode: 'monitor' },
      spendCap: { amount: 30, windowMs: 86_400_000 },
    });
    const number = await heldRange(fx.host);
    expect((await startFrom(fx.host, freshIp(), number(10))).status).toBe(201);
    // Ten SMS take the whole cap (the last share is not kept in monitor mode): five more fit.
    for (let i = 0; i < 5; i++) expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    const events = fx.host.opsEvents.filter((e) => e.name === 'verification.fraud_suspected');
    expect(events[0]?.payload).toMatchObject({ mode: 'monitor', subject: 'range', rule: 'fresh_burst' });
  });

  it("the spend cap's last share is kept for methods charged on proof: past it an SMS is graded, not 503, and a reverse flash call is served", async () => {
    // 30 RUB: the last 20 % (6 RUB) is kept; eight SMS at 3 RUB take the rest.
    fx.host = await protectedHost(fx.sb, platform, { spendCap: { amount: 30, windowMs: 86_400_000 } });
    for (let i = 0; i < 8; i++) expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    const graded = await startFrom(fx.host, freshIp(), freshPhone());
    expect(graded.body).toMatchObject({
      error_code: 'method_held',
      held: 'spend_cap',
      offered_methods: ['reverse_flash_call', 'msgr2_bot'],
    });
    expect((await startFrom(fx.host, freshIp(), freshPhone(), 'reverse_flash_call')).status).toBe(201);
  });

  it('a shared address (carrier NAT) past the per-address limit: an SMS is graded, not 429, and a reverse flash call from it is served; grading off refuses as before', async () => {
    fx.host = await protectedHost(fx.sb, platform, { startPerIp: { points: 3, windowMs: 3_600_000 } });
    const nat = freshIp();
    for (let i = 0; i < 3; i++) expect((await startFrom(fx.host, nat, freshPhone())).status).toBe(201);
    const graded = await startFrom(fx.host, nat, freshPhone());
    expect(graded.status).toBe(409);
    expect(graded.body).toMatchObject({
      error_code: 'method_held',
      held: 'start_ip_limit',
      offered_methods: ['reverse_flash_call', 'msgr2_bot'],
    });
    for (let i = 0; i < 5; i++)
      expect((await startFrom(fx.host, nat, freshPhone(), 'reverse_flash_call')).status).toBe(201);
    await fx.host.close();

    fx.host = await protectedHost(fx.sb, platform, {
      startPerIp: { points: 3, windowMs: 3_600_000 },
      pumping: { grading: false },
    });
    const office = freshIp();
    for (let i = 0; i < 3; i++) expect((await startFrom(fx.host, office, freshPhone())).status).toBe(201);
    const refused = await startFrom(fx.host, office, freshPhone(), 'reverse_flash_call');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ reason: 'start_ip_limit' });
  });

  it('with a device hint, a graded answer offers only the methods charged on proof the device allows, explicit or auto alike; none left: refused as before', async () => {
    const limits = { startPerIp: { points: 3, windowMs: 3_600_000 } };
    const desktop = (ip: string, method: string) =>
      start(fx.host!, { phone_number: freshPhone(), method, device: 'desktop' }, { 'x-forwarded-for': ip });
    fx.host = await protectedHost(fx.sb, platform, limits, {
      orchestration: { exclude: { desktop: ['reverse_flash_call'] } },
    });
    const nat = freshIp();
    for (let i = 0; i < 3; i++) expect((await desktop(nat, 'sms')).status).toBe(201);
    const graded = await desktop(nat, 'sms');
    expect({ status: graded.status, body: graded.body }).toMatchObject({
      status: 409,
      body: { error_code: 'method_held', held: 'start_ip_limit', offered_methods: ['msgr2_bot'] },
    });
    const auto = await desktop(nat, 'auto');
    expect({ status: auto.status, method: auto.body.method }).toEqual({ status: 201, method: 'msgr2_bot' });
    await fx.host.close();

    fx.host = await protectedHost(fx.sb, platform, limits, {
      orchestration: { exclude: { desktop: ['reverse_flash_call', 'msgr2_bot'] } },
    });
    const office = freshIp();
    for (let i = 0; i < 3; i++) expect((await desktop(office, 'sms')).status).toBe(201);
    const sent = fx.sb.requestCount('POST /v1/verify');
    const refused = await desktop(office, 'sms');
    expect({ status: refused.status, reason: refused.body.reason }).toEqual({
      status: 429,
      reason: 'start_ip_limit',
    });
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(sent);
  });

  it("a hold's Retry-After says when it really lifts (the window rolled enough), not the cool-off's end: graded before it, served at it", async () => {
    fx.host = await protectedHost(fx.sb, platform);
    // Two ranges held alike at once, in two operator prefixes (so that neither prefix is held).
    const rangeIn = (prefix: string): ((i: number) => string) => {
      rangeSerial += 1;
      const range = `+7${prefix}${String((process.pid * 13 + rangeSerial * 43) % 1000).padStart(3, '0')}`;
      return (i) => `${range}${String(i).padStart(4, '0')}`;
    };
    const a = rangeIn('977');
    const b = rangeIn('985');
    const t0 = fx.sb.now();
    let lastA: Awaited<ReturnType<typeof startFrom>> | undefined;
    let lastB: Awaited<ReturnType<typeof startFrom>> | undefined;
    for (let i = 0; i < 5; i++) {
      lastA = await startFrom(fx.host, freshIp(), a(i));
      lastB = await startFrom(fx.host, freshIp(), b(i));
    }
    expect(lastA!.body).toMatchObject({ error_code: 'method_held', held: 'range_held' });
    expect(lastB!.body).toMatchObject({ error_code: 'method_held', held: 'range_held' });
    const retryA = Number(lastA!.headers.get('retry-after'));
    const retryB = Number(lastB!.headers.get('retry-after'));
    // The cool-off is 15 minutes; the burst stays in the sliding window longer than that.
    expect(retryA).toBeGreaterThan(15 * 60);
    expect(Math.abs(retryA - retryB)).toBeLessThanOrEqual(5 * 60);
    // Ten minutes before it says (the answer is rounded up to 5 minutes): still graded.
    await fx.sb.advance(t0 + (retryA - 10 * 60) * 1000 - fx.sb.now());
    expect((await startFrom(fx.host, freshIp(), a(100))).body).toMatchObject({ held: 'range_held' });
    // When it says: served (a user of another network: the burst's /24 is past its share, giver-shares.ts).
    await fx.sb.advance(t0 + retryB * 1000 + 1000 - fx.sb.now());
    expect((await startFrom(fx.host, '203.0.113.77', b(100))).status).toBe(201);
  });
});

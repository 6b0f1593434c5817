/**
 * `verification.verified` (and failed, expired) carry the journey: the methods it tried and the
 * money it was charged, by the API's billing rules, as the sandbox's balance shows them.
 */
import { describe, expect, it } from '@jest/globals';
import type { VerificationEvent } from '../../src/core/verification-events.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import { DAY_MS, toJustPast } from '../support/utc-bounds.js';
import {
  apiCheck,
  check,
  freshPhone,
  journeyFixture,
  journeyHost,
  sessionIds,
  start,
  switchMethod,
} from './journey-host.js';

function eventOf(host: TestApp, requestId: string, event: string): VerificationEvent | undefined {
  return host.events.find((e) => e.requestId === requestId && e.event === event);
}

describe.each(PLATFORMS)('journeys: events carry the journey (%s)', (platform) => {
  const fx = journeyFixture();
  const balance = () => fx.sb.getAccount(fx.apiKey)!.balance.amount;

  it('verified after a switch: both methods, and what both cost; the switched-away one expires with the same journey', async () => {
    const host = await journeyHost(fx, platform);
    const before = balance();
    const phone = freshPhone();
    // msgr1_otp is charged at initiation (0.90), the reverse flash call once verified (0.25).
    const first = await start(host, { phone_number: phone, method: 'msgr1_otp' });
    expect((await switchMethod(host, first.body.verification_id)).body.method).toBe('reverse_flash_call');
    const [otpId, callId] = sessionIds(fx.sb, phone);
    await fx.sb.call(callId!, phone);
    await fx.sb.webhooksIdle();
    expect(eventOf(host, callId!, 'verification.verified')).toMatchObject({
      methodsTried: ['msgr1_otp', 'reverse_flash_call'],
      journeyCost: { amount: 1.15, currency: 'RUB' },
      source: 'webhook',
    });
    expect(before - balance()).toBeCloseTo(1.15, 2);

    await fx.sb.advance(300_000);
    await fx.sb.webhooksIdle();
    expect(eventOf(host, otpId!, 'verification.expired')).toMatchObject({
      methodsTried: ['msgr1_otp', 'reverse_flash_call'],
      journeyCost: { amount: 1.15, currency: 'RUB' },
    });
    expect(before - balance()).toBeCloseTo(1.15, 2);
  });

  it('a journey of one step: its own method, and its own charge (none when not delivered or not verified)', async () => {
    const host = await journeyHost(fx, platform);
    const before = balance();
    const smsPhone = freshPhone();
    const sms = await start(host, { phone_number: smsPhone, method: 'sms' });
    const [smsId] = sessionIds(fx.sb, smsPhone);
    await fx.sb.deliver(smsId!);
    await check(host, sms.body.verification_id, String(fx.sb.getSession(smsId!)!.code));
    expect(eventOf(host, smsId!, 'verification.verified')).toMatchObject({
      methodsTried: ['sms'],
      journeyCost: { amount: 3, currency: 'RUB' },
      source: 'check',
    });

    const operatorPhone = freshPhone();
    await start(host, { phone_number: operatorPhone, method: 'operator_id' });
    const [operatorId] = sessionIds(fx.sb, operatorPhone);
    await fx.sb.operator(operatorId!, 'fail');
    await fx.sb.webhooksIdle();
    expect(eventOf(host, operatorId!, 'verification.failed')).toMatchObject({
      methodsTried: ['operator_id'],
      journeyCost: { amount: 2, currency: 'RUB' },
    });

    const callPhone = freshPhone();
    await start(host, { phone_number: callPhone, method: 'reverse_flash_call' });
    const [callId] = sessionIds(fx.sb, callPhone);
    const flashPhone = freshPhone();
    await start(host, { phone_number: flashPhone, method: 'flash_call' });
    const [flashId] = sessionIds(fx.sb, flashPhone);
    await fx.sb.advance(300_000);
    await fx.sb.webhooksIdle();
    for (const [id, method] of [
      [callId!, 'reverse_flash_call'],
      [flashId!, 'flash_call'],
    ])
      expect(eventOf(host, id, 'verification.expired')).toMatchObject({
        methodsTried: [method],
        journeyCost: { amount: 0, currency: 'RUB' },
      });
    // The sandbox charged exactly what the events say: 3.00 + 2.00.
    expect(before - balance()).toBeCloseTo(5, 2);
  });

  it('a code typed on the API directly for a switched-away step still reports the whole journey', async () => {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'flash_call' });
    await switchMethod(host, first.body.verification_id, 'sms');
    const [flashId] = sessionIds(fx.sb, phone);
    await fx.sb.deliver(flashId!);
    await apiCheck(fx.sb, fx.apiKey, flashId!, String(fx.sb.getSession(flashId!)!.code));
    await fx.sb.webhooksIdle();
    // The flash call was delivered (0.80); the SMS, never delivered, costs nothing.
    expect(eventOf(host, flashId!, 'verification.verified')).toMatchObject({
      methodsTried: ['flash_call', 'sms'],
      journeyCost: { amount: 0.8, currency: 'RUB' },
    });
  });

  it('two steps verified: one verification.verified for the journey, the other step as verification.verified_again, both named by the verification_id the frontend holds', async () => {
    const host = await journeyHost(fx, platform);
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'flash_call' });
    const id = first.body.verification_id;
    expect((await switchMethod(host, id, 'reverse_flash_call')).body.verification_id).toBe(id);
    const [flashId, callId] = sessionIds(fx.sb, phone);
    // The user calls (the journey is verified), then types the flash call's code on the API too.
    await fx.sb.call(callId!, phone);
    await fx.sb.webhooksIdle();
    await fx.sb.deliver(flashId!);
    await apiCheck(fx.sb, fx.apiKey, flashId!, String(fx.sb.getSession(flashId!)!.code));
    await fx.sb.webhooksIdle();
    const outcomes = host.events.filter((e) => e.event !== 'verification.code_required');
    expect(outcomes.map((e) => [e.event, e.requestId])).toEqual([
      ['verification.verified', callId],
      ['verification.verified_again', flashId],
    ]);
    for (const event of host.events) expect(event.verificationId).toBe(id);
    // A journey of one step is named by its handle too.
    const other = freshPhone();
    const single = await start(host, { phone_number: other, method: 'reverse_flash_call' });
    await fx.sb.call(sessionIds(fx.sb, other)[0]!, other);
    await fx.sb.webhooksIdle();
    expect(host.events.at(-1)).toMatchObject({
      event: 'verification.verified',
      verificationId: single.body.verification_id,
    });
  });

  it("a step verified again is counted by the spend cap too: a reverse call made after the SMS verified takes its 0.25 RUB of the day's cap", async () => {
    // The cap alone, 6.20 RUB a UTC day: two SMS (3 RUB each) fit, two SMS and a proved call (6.25) do not.
    await fx.sb.advance(toJustPast(fx.sb.now(), DAY_MS));
    const limits = { pumping: false, startPerIp: false, freeStartPerCaller: false } as const;
    const host = await journeyHost(fx, platform, {
      limits: { ...limits, spendCap: { amount: 6.2, windowMs: DAY_MS } },
    });
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms' });
    await switchMethod(host, first.body.verification_id, 'reverse_flash_call');
    const [smsId, callId] = sessionIds(fx.sb, phone);
    // The user types the SMS code on the API, then places the call too.
    await apiCheck(fx.sb, fx.apiKey, smsId!, String(fx.sb.getSession(smsId!)!.code));
    await fx.sb.webhooksIdle();
    await fx.sb.call(callId!, phone);
    await fx.sb.webhooksIdle();
    expect(eventOf(host, callId!, 'verification.verified_again')).toBeDefined();
    const refused = await start(host, { phone_number: freshPhone(), method: 'sms' });
    expect({ status: refused.status, reason: refused.body.reason }).toEqual({
      status: 503,
      reason: 'spend_cap',
    });
  });
});

import { describe, expect, it } from '@jest/globals';
import {
  answeringSession,
  decideSwitch,
  fallbackAvailableAt,
  isJourneyTerminal,
  journeyCost,
  journeyExposureMinor,
  methodsTried,
  oneStepJourney,
  remainingMethods,
  retriableMethods,
  switchableMethods,
  withStep,
  type JourneyRecord,
  type SwitchRequest,
} from './journey.js';
import { chargedCost, newSessionRecord, type SessionRecord } from './session-record.js';
import type { KnownVerificationMethod } from './verification-method.js';

const NOW = 1_700_000_000_000;
const PRICES: Record<string, number> = {
  reverse_flash_call: 25,
  flash_call: 80,
  msgr1_otp: 90,
  msgr2_bot: 100,
  sms: 300,
  operator_id: 200,
};

function session(
  requestId: string,
  method: KnownVerificationMethod,
  status = 'sent',
  createdAt = NOW,
): SessionRecord {
  return {
    ...newSessionRecord(
      {
        requestId,
        phoneNumber: '+79123456789',
        method,
        status,
        cost: { amount: PRICES[method]! / 100, currency: 'RUB' },
      },
      { owner: 'alice', createdAt, ttlMs: 300_000, as: 'answer' },
    ),
  };
}

const NO_EXCLUSIONS = { mobile: [], desktop: [] };

describe('a journey of one step is its first session alone', () => {
  it('named by the session, with its number and method; its owner stays on the session', () => {
    const journey = oneStepJourney(session('r1', 'sms'), 'desktop');
    expect(journey).toStrictEqual({
      journeyId: 'r1',
      phoneNumber: '+79123456789',
      device: 'desktop',
      steps: [{ requestId: 'r1', method: 'sms', startedAt: NOW }],
      createdAt: NOW,
    });
    expect(
      methodsTried(withStep(journey, { requestId: 'r2', method: 'flash_call', startedAt: NOW })),
    ).toStrictEqual(['sms', 'flash_call']);
  });
});

describe('answeringSession: the status the frontend sees', () => {
  const first = session('r1', 'sms');
  const second = session('r2', 'flash_call');
  const journey = withStep(oneStepJourney(first), { requestId: 'r2', method: 'flash_call', startedAt: NOW });

  it('the current step answers while nothing is verified', () => {
    expect(answeringSession(journey, [first, second], second)).toStrictEqual({
      status: 'sent',
      record: second,
    });
  });

  it('a switched-away step that verified makes the journey verified, with that session', () => {
    const verified = { ...first, status: 'verified', verifiedAt: NOW + 5 };
    expect(answeringSession(journey, [verified, second], second)).toStrictEqual({
      status: 'verified',
      record: verified,
    });
  });

  it('canceled wins over everything, the current session answering', () => {
    const canceled = { ...journey, canceledAt: NOW };
    const verified = { ...first, status: 'verified' };
    expect(answeringSession(canceled, [verified, second], second)).toStrictEqual({
      status: 'canceled',
      record: second,
    });
    expect(isJourneyTerminal('canceled')).toBe(true);
    expect(isJourneyTerminal('expired')).toBe(true);
    expect(isJourneyTerminal('delivered')).toBe(false);
  });
});

describe('remainingMethods: the policy order, less those tried and excluded for the device', () => {
  const order: KnownVerificationMethod[] = ['reverse_flash_call', 'flash_call', 'msgr2_bot', 'sms'];
  it('drops tried methods and the device exclusions, keeping the order', () => {
    const journey: JourneyRecord = { ...oneStepJourney(session('r1', 'flash_call')), device: 'desktop' };
    expect(remainingMethods(order, journey, NO_EXCLUSIONS)).toStrictEqual([
      'reverse_flash_call',
      'msgr2_bot',
      'sms',
    ]);
    expect(
      remainingMethods(order, journey, { mobile: ['sms'], desktop: ['reverse_flash_call', 'msgr2_bot'] }),
    ).toStrictEqual(['sms']);
    // No device hint: nothing is excluded.
    expect(
      remainingMethods(order, oneStepJourney(session('r1', 'sms')), {
        mobile: ['flash_call'],
        desktop: ['flash_call'],
      }),
    ).toStrictEqual(['reverse_flash_call', 'flash_call', 'msgr2_bot']);
  });
});

describe('retriableMethods: tried methods charged on proof, which a graded answer offers again', () => {
  const order: KnownVerificationMethod[] = ['reverse_flash_call', 'flash_call', 'msgr2_bot', 'sms'];
  it('keeps the tried ones charged on proof the policy offers and the device does not exclude, in its order', () => {
    const tried = withStep(
      withStep(oneStepJourney(session('r1', 'msgr2_bot')), {
        requestId: 'r2',
        method: 'reverse_flash_call',
        startedAt: NOW,
      }),
      { requestId: 'r3', method: 'flash_call', startedAt: NOW },
    );
    expect(retriableMethods(order, tried, NO_EXCLUSIONS)).toStrictEqual(['reverse_flash_call', 'msgr2_bot']);
    const desktop: JourneyRecord = { ...tried, device: 'desktop' };
    expect(retriableMethods(order, desktop, { mobile: [], desktop: ['reverse_flash_call'] })).toStrictEqual([
      'msgr2_bot',
    ]);
    // No longer offered by the account: not offered again.
    expect(retriableMethods(['flash_call', 'sms'], tried, NO_EXCLUSIONS)).toStrictEqual([]);
  });
});

describe('fallbackAvailableAt', () => {
  const step = { requestId: 'r1', method: 'sms', startedAt: NOW };
  const pending = { status: 'sent', expiresAt: NOW + 300_000 };
  const base = { status: 'sent', current: pending, step, timeoutMs: 60_000, hasCandidate: true };

  it("is the step's start plus its timeout while the session is pending", () => {
    expect(fallbackAvailableAt({ ...base, now: NOW + 1000 })).toBe(NOW + 60_000);
  });

  it('is at once when the session failed or expired, and does not move once the timeout passed', () => {
    const failed = { status: 'failed', expiresAt: NOW + 300_000 };
    expect(fallbackAvailableAt({ ...base, status: 'failed', current: failed, now: NOW + 1000 })).toBe(
      NOW + 1000,
    );
    expect(fallbackAvailableAt({ ...base, status: 'failed', current: failed, now: NOW + 90_000 })).toBe(
      NOW + 60_000,
    );
    // Past expires_at without the record knowing yet: at once too.
    expect(fallbackAvailableAt({ ...base, now: NOW + 300_000 })).toBe(NOW + 60_000);
  });

  it('is absent when no method is left, or the journey is canceled or verified', () => {
    expect(fallbackAvailableAt({ ...base, hasCandidate: false, now: NOW })).toBeUndefined();
    expect(fallbackAvailableAt({ ...base, status: 'canceled', now: NOW })).toBeUndefined();
    expect(fallbackAvailableAt({ ...base, status: 'verified', now: NOW })).toBeUndefined();
  });
});

describe('money: journeyExposureMinor (ceiling) and journeyCost (events)', () => {
  it('counts what was charged, and the price of pending steps that may still be', () => {
    const sms = session('r1', 'sms'); // pending: may still be delivered and charged
    const otp = session('r2', 'msgr1_otp', 'expired'); // charged at initiation
    const call = session('r3', 'reverse_flash_call', 'expired'); // never charged
    expect(journeyExposureMinor([sms, otp, call, null], chargedCost)).toBe(300 + 90);
    expect(journeyCost([sms, otp, call], chargedCost)).toStrictEqual({ amount: 0.9, currency: 'RUB' });
  });

  it('adds in minor units (no floating-point drift) and follows the billing rule', () => {
    const rfc = session('r1', 'reverse_flash_call', 'verified');
    const flash = session('r2', 'flash_call', 'delivered');
    const otp = session('r3', 'msgr1_otp', 'sent');
    expect(journeyCost([otp, flash, rfc], chargedCost)).toStrictEqual({ amount: 1.95, currency: 'RUB' });
    expect(journeyCost([session('r4', 'sms', 'expired')], chargedCost)).toStrictEqual({
      amount: 0,
      currency: 'RUB',
    });
  });

  it('is null when no step has a stated price; a charge function of the caller decides', () => {
    const unpriced = { ...session('r1', 'sms', 'verified'), cost: undefined };
    expect(journeyCost([unpriced, null], chargedCost)).toBeNull();
    const everything = (record: SessionRecord) => record.cost;
    expect(journeyCost([session('r1', 'sms', 'expired')], everything)).toStrictEqual({
      amount: 3,
      currency: 'RUB',
    });
  });
});

describe('decideSwitch: where a switch goes, or why not', () => {
  const first = session('r1', 'sms', 'sent', NOW);
  const request = (overrides: Partial<SwitchRequest> = {}): SwitchRequest => ({
    journey: oneStepJourney(first),
    status: 'sent',
    current: first,
    remaining: ['reverse_flash_call', 'flash_call', 'msgr1_otp'],
    priceMinor: (method) => PRICES[method]!,
    spentMinor: 300,
    maxSteps: 3,
    maxCostMinor: 600,
    timeoutMs: 60_000,
    skippable: true,
    now: NOW + 1000,
    ...overrides,
  });

  it("goes to the policy's next method, or to the one named among those remaining", () => {
    expect(decideSwitch(request())).toStrictEqual({ method: 'reverse_flash_call' });
    expect(decideSwitch(request({ named: 'msgr1_otp' }))).toStrictEqual({ method: 'msgr1_otp' });
  });

  it('refuses a named method that is not remaining (tried, excluded or not offered) with what is', () => {
    for (const named of ['sms', 'operator_id', 'carrier_pigeon'])
      expect(decideSwitch(request({ named }))).toStrictEqual({
        refusal: {
          code: 'method_not_available',
          available: ['reverse_flash_call', 'flash_call', 'msgr1_otp'],
        },
      });
  });

  it('takes a retriable method when named (within the money ceiling), never as the next', () => {
    const retriable: KnownVerificationMethod[] = ['reverse_flash_call'];
    expect(
      decideSwitch(request({ remaining: ['sms'], retriable, named: 'reverse_flash_call' })),
    ).toStrictEqual({
      method: 'reverse_flash_call',
    });
    expect(decideSwitch(request({ remaining: ['sms'], retriable }))).toStrictEqual({ method: 'sms' });
    expect(decideSwitch(request({ remaining: [], retriable }))).toStrictEqual({
      refusal: { code: 'journey_limit_reached', limit: 'methods' },
    });
    expect(
      decideSwitch(request({ remaining: [], retriable, named: 'reverse_flash_call', maxCostMinor: 310 })),
    ).toStrictEqual({ refusal: { code: 'journey_limit_reached', limit: 'max_cost' } });
  });

  it('refuses a journey that is over: canceled or verified', () => {
    expect(decideSwitch(request({ status: 'canceled' }))).toStrictEqual({
      refusal: { code: 'not_pending', status: 'canceled' },
    });
    expect(decideSwitch(request({ status: 'verified' }))).toStrictEqual({
      refusal: { code: 'not_pending', status: 'verified' },
    });
  });

  it('refuses past the ceiling on steps, and when no method is left', () => {
    const two = withStep(oneStepJourney(first), { requestId: 'r2', method: 'flash_call', startedAt: NOW });
    expect(decideSwitch(request({ journey: two, maxSteps: 2 }))).toStrictEqual({
      refusal: { code: 'journey_limit_reached', limit: 'max_steps' },
    });
    expect(decideSwitch(request({ remaining: [] }))).toStrictEqual({
      refusal: { code: 'journey_limit_reached', limit: 'methods' },
    });
  });

  it('holds spent plus the next price to the money ceiling: the next that fits, or a refusal', () => {
    // 3.00 spent, 3.30 allowed: only the 0.25 call fits; named dearer ones are refused.
    expect(
      decideSwitch(request({ maxCostMinor: 330, remaining: ['flash_call', 'reverse_flash_call'] })),
    ).toStrictEqual({ method: 'reverse_flash_call' });
    expect(decideSwitch(request({ maxCostMinor: 330, named: 'flash_call' }))).toStrictEqual({
      refusal: { code: 'journey_limit_reached', limit: 'max_cost' },
    });
    expect(decideSwitch(request({ maxCostMinor: 330, remaining: ['flash_call'] }))).toStrictEqual({
      refusal: { code: 'journey_limit_reached', limit: 'max_cost' },
    });
    expect(switchableMethods({ ...request({ maxCostMinor: 380 }) })).toStrictEqual([
      'reverse_flash_call',
      'flash_call',
    ]);
  });

  it('holds a method that is not skippable until its fallback time; a failed one may be left at once', () => {
    expect(decideSwitch(request({ skippable: false }))).toStrictEqual({
      refusal: { code: 'fallback_not_available', availableAt: NOW + 60_000 },
    });
    expect(decideSwitch(request({ skippable: false, now: NOW + 60_000 }))).toStrictEqual({
      method: 'reverse_flash_call',
    });
    const failed = { ...first, status: 'failed' };
    expect(decideSwitch(request({ skippable: false, status: 'failed', current: failed }))).toStrictEqual({
      method: 'reverse_flash_call',
    });
  });
});

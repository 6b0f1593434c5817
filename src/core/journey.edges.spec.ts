import { describe, expect, it } from '@jest/globals';
import {
  answeringSession,
  decideSwitch,
  DEVICE_HINTS,
  fallbackAvailableAt,
  isDeviceHint,
  oneStepJourney,
  switchableMethods,
  withStep,
  type SwitchRequest,
} from './journey.js';
import { newSessionRecord, type SessionRecord } from './session-record.js';
import type { KnownVerificationMethod } from './verification-method.js';

const NOW = 1_700_000_000_000;
const PRICES: Record<string, number> = { reverse_flash_call: 25, flash_call: 80, msgr2_bot: 100, sms: 300 };

function session(
  requestId: string,
  method: KnownVerificationMethod,
  status = 'sent',
  owner?: string,
): SessionRecord {
  return newSessionRecord(
    { requestId, phoneNumber: '+79123456789', method, status },
    { owner, createdAt: NOW, ttlMs: 300_000, as: 'answer' },
  );
}

describe('device hints', () => {
  it('mobile and desktop, nothing else', () => {
    expect(DEVICE_HINTS).toStrictEqual(['mobile', 'desktop']);
    expect(isDeviceHint('mobile')).toBe(true);
    expect(isDeviceHint('desktop')).toBe(true);
    for (const value of ['tablet', 'Mobile', '', undefined, null, 1]) expect(isDeviceHint(value)).toBe(false);
  });
});

describe('oneStepJourney: a session without an owner or a device hint', () => {
  it('holds neither', () => {
    const journey = oneStepJourney(session('r1', 'sms'));
    expect(journey).toStrictEqual({
      journeyId: 'r1',
      phoneNumber: '+79123456789',
      steps: [{ requestId: 'r1', method: 'sms', startedAt: NOW }],
      createdAt: NOW,
    });
    expect('owner' in journey).toBe(false);
    expect('device' in journey).toBe(false);
  });
});

describe('answeringSession: edges', () => {
  const first = session('r1', 'sms');
  const second = session('r2', 'flash_call');
  const journey = withStep(oneStepJourney(first), { requestId: 'r2', method: 'flash_call', startedAt: NOW });

  it('a verified current step answers, even when an earlier step verified too', () => {
    const both = [
      { ...first, status: 'verified', verifiedAt: NOW + 1 },
      { ...second, status: 'verified', verifiedAt: NOW + 2 },
    ];
    expect(answeringSession(journey, both, both[1]!)).toStrictEqual({ status: 'verified', record: both[1] });
  });

  it('a step the store has no record of is skipped', () => {
    expect(answeringSession(journey, [null, second], second)).toStrictEqual({
      status: 'sent',
      record: second,
    });
  });
});

describe('fallbackAvailableAt: a session whose end is now', () => {
  it('may be left at once, as one that expired', () => {
    const step = { requestId: 'r1', method: 'sms', startedAt: NOW };
    const ending = { status: 'sent', expiresAt: NOW + 5_000 };
    const input = { status: 'sent', current: ending, step, timeoutMs: 60_000, hasCandidate: true };
    expect(fallbackAvailableAt({ ...input, now: NOW + 4_999 })).toBe(NOW + 60_000);
    expect(fallbackAvailableAt({ ...input, now: NOW + 5_000 })).toBe(NOW + 5_000);
  });
});

describe('switchable methods and named retries', () => {
  const first = session('r1', 'sms');
  const request = (overrides: Partial<SwitchRequest> = {}): SwitchRequest => ({
    journey: oneStepJourney(first),
    status: 'sent',
    current: first,
    remaining: ['reverse_flash_call', 'flash_call'],
    priceMinor: (method) => PRICES[method]!,
    spentMinor: 300,
    maxSteps: 3,
    maxCostMinor: 600,
    timeoutMs: 60_000,
    skippable: true,
    now: NOW + 1000,
    ...overrides,
  });

  it('none once the journey is canceled or verified, or has used its steps', () => {
    expect(switchableMethods(request())).toStrictEqual(['reverse_flash_call', 'flash_call']);
    expect(switchableMethods(request({ status: 'canceled' }))).toStrictEqual([]);
    expect(switchableMethods(request({ status: 'verified' }))).toStrictEqual([]);
    const two = withStep(oneStepJourney(first), { requestId: 'r2', method: 'flash_call', startedAt: NOW });
    expect(switchableMethods(request({ journey: two, maxSteps: 3 }))).toStrictEqual([
      'reverse_flash_call',
      'flash_call',
    ]);
    expect(switchableMethods(request({ journey: two, maxSteps: 2 }))).toStrictEqual([]);
  });

  it('a named method is taken only if it is the one named, among the remaining or the retriable', () => {
    const retriable: KnownVerificationMethod[] = ['reverse_flash_call', 'msgr2_bot'];
    const retry = request({ remaining: ['sms'], retriable });
    expect(decideSwitch({ ...retry, named: 'msgr2_bot' })).toStrictEqual({ method: 'msgr2_bot' });
    expect(decideSwitch({ ...retry, named: 'flash_call' })).toStrictEqual({
      refusal: { code: 'method_not_available', available: ['sms'] },
    });
  });

  it('a retriable method whose price brings the journey exactly to its ceiling is taken', () => {
    const retry = request({ remaining: [], retriable: ['reverse_flash_call'], named: 'reverse_flash_call' });
    expect(decideSwitch({ ...retry, maxCostMinor: 325 })).toStrictEqual({ method: 'reverse_flash_call' });
    expect(decideSwitch({ ...retry, maxCostMinor: 324 })).toStrictEqual({
      refusal: { code: 'journey_limit_reached', limit: 'max_cost' },
    });
  });
});

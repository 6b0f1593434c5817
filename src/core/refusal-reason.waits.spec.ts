import { describe, expect, it } from '@jest/globals';
import {
  coarseWaitMs,
  ProtectionRefusal,
  protectionRefusal,
  ProtectionRefusalReason,
  retryAfterSeconds,
} from './refusal-reason.js';

describe('protection refusals', () => {
  it('Retry-After is whole seconds rounded up, never below 1 (0 would invite an immediate retry)', () => {
    expect([0, -5, 1, 999, 1000, 1001, 59_500].map(retryAfterSeconds)).toStrictEqual([1, 1, 1, 1, 1, 2, 60]);
  });

  it('a coarse wait is whole 5-minute steps, never shorter than the real wait nor below one step', () => {
    const hour = 3_600_000;
    expect(coarseWaitMs(0, hour)).toBe(300_000);
    expect(coarseWaitMs(1, hour)).toBe(300_000);
    expect(coarseWaitMs(300_000, hour)).toBe(300_000);
    expect(coarseWaitMs(300_001, hour)).toBe(600_000);
    expect(coarseWaitMs(3_599_000, hour)).toBe(hour);
  });

  it('a window shorter than 5 minutes is its own step', () => {
    expect(coarseWaitMs(1, 60_000)).toBe(60_000);
    expect(coarseWaitMs(60_000, 60_000)).toBe(60_000);
    expect(coarseWaitMs(61_000, 60_000)).toBe(120_000);
  });

  it('the reason decides the code and status; the problem document carries it, any extra fields and Retry-After', () => {
    const cooldown = protectionRefusal(ProtectionRefusalReason.resendCooldown, 1500, {
      resend_available_at: '2026-01-01T00:00:00.000Z',
    });
    expect(cooldown).toBeInstanceOf(ProtectionRefusal);
    expect(cooldown.reason).toBe('resend_cooldown');
    expect([cooldown.errorCode, cooldown.getStatus(), cooldown.retryAfterSeconds]).toStrictEqual([
      'rate_limit_exceeded',
      429,
      2,
    ]);
    expect(cooldown.extra).toStrictEqual({
      reason: 'resend_cooldown',
      resend_available_at: '2026-01-01T00:00:00.000Z',
    });
    expect(cooldown.toProblem()).toMatchObject({
      status: 429,
      error_code: 'rate_limit_exceeded',
      detail: 'Too many requests, try again later',
      reason: 'resend_cooldown',
    });

    const wrong = protectionRefusal(ProtectionRefusalReason.wrongCodesOwner, 10_000);
    expect([wrong.errorCode, wrong.getStatus(), wrong.extra, wrong.retryAfterSeconds]).toStrictEqual([
      'too_many_wrong_codes',
      429,
      { reason: 'wrong_codes_owner' },
      10,
    ]);
    expect(wrong.toProblem()).toMatchObject({ detail: 'Too many wrong codes were entered, try again later' });

    const cap = protectionRefusal(ProtectionRefusalReason.spendCap, 0);
    expect([cap.errorCode, cap.getStatus(), cap.extra, cap.retryAfterSeconds]).toStrictEqual([
      'service_unavailable',
      503,
      { reason: 'spend_cap' },
      1,
    ]);
    expect(cap.toProblem()).toMatchObject({
      detail: 'Phone verification is temporarily unavailable, try again later',
    });
  });
});

import { describe, expect, it } from '@jest/globals';
import {
  PROTECTION_REFUSALS,
  ProtectionRefusal,
  ProtectionRefusalReason,
  refusalReason,
} from './refusal-reason.js';
import { VerificationClientError, type ClientErrorCode } from './verification.errors.js';

const isProtectionReason = (reason: string): reason is ProtectionRefusalReason =>
  Object.hasOwn(PROTECTION_REFUSALS, reason);

/**
 * The start route's error for `code` and `reason`: protection's own refusal when the reason is one
 * of protection's (and the code is the one that reason is answered with), else a plain client error
 * (the host's `start_refused`, the allowlists, the API's 429).
 */
const refusal = (code: ClientErrorCode, reason?: string) => {
  if (reason !== undefined && code !== 'start_refused' && isProtectionReason(reason)) {
    const error = new ProtectionRefusal(reason, 1);
    expect(error.errorCode).toBe(code);
    return refusalReason(error);
  }
  return refusalReason(new VerificationClientError(code, undefined, reason === undefined ? {} : { reason }));
};

describe('refusalReason: start-route errors as metric labels', () => {
  it.each([
    ['rate_limit_exceeded', 'start_ip_limit', 'rate_limit'],
    ['rate_limit_exceeded', 'start_phone_limit', 'rate_limit'],
    ['rate_limit_exceeded', 'resend_cooldown', 'cooldown'],
    ['rate_limit_exceeded', undefined, 'upstream_rate_limit'],
    ['service_unavailable', 'spend_cap', 'spend_cap'],
    ['service_unavailable', 'before_start_failed', 'hook'],
    ['service_unavailable', 'assess_start_failed', 'hook'],
    ['service_unavailable', 'start_in_progress', 'in_progress'],
    ['start_refused', 'captcha_required', 'hook'],
    // The pumping defence's holds and the spend cap's reserve.
    ['rate_limit_exceeded', 'range_held', 'pumping'],
    ['rate_limit_exceeded', 'owner_held', 'pumping'],
    ['rate_limit_exceeded', 'client_held', 'pumping'],
    ['service_unavailable', 'spend_cap_reserve', 'pumping'],
    ['start_refused', 'range_held', 'hook'],
    // The host's own reason code is never read as one of protection's.
    ['start_refused', 'spend_too_much', 'hook'],
    ['phone_not_allowed', undefined, 'allowlist'],
    ['method_not_available', undefined, 'allowlist'],
  ] as const)('%s with reason %s → %s', (code, reason, label) => {
    expect(refusal(code, reason)).toBe(label);
  });

  it.each([
    ['validation_error', undefined],
    ['service_unavailable', undefined],
    ['not_found', undefined],
  ] as const)('%s is not a refusal', (code, reason) => {
    expect(refusal(code, reason)).toBeUndefined();
  });

  it('reads the label from the typed reason, never from the text of a plain error', () => {
    // An error that merely carries a protection reason in its body is not protection's refusal.
    const lookalike = new VerificationClientError('rate_limit_exceeded', undefined, {
      reason: 'resend_cooldown',
    });
    expect(refusalReason(lookalike)).toBe('upstream_rate_limit');
    expect(
      refusalReason(new VerificationClientError('service_unavailable', undefined, { reason: 'spend_cap' })),
    ).toBeUndefined();
    expect(refusalReason(new ProtectionRefusal('check_limit', 1))).toBe('rate_limit');
    expect(refusalReason(new ProtectionRefusal('wrong_codes_owner', 1))).toBe('rate_limit');
  });

  it('ignores errors that are not client errors', () => {
    expect(refusalReason(new Error('boom'))).toBeUndefined();
    expect(refusalReason('spend_cap')).toBeUndefined();
  });
});

describe('protection refusals on the wire', () => {
  it('each reason has its status and error code in one table', () => {
    const wire = Object.values(ProtectionRefusalReason).map((reason) => {
      const error = new ProtectionRefusal(reason, 7);
      return [reason, error.getStatus(), error.errorCode];
    });
    expect(wire).toStrictEqual([
      ['start_ip_limit', 429, 'rate_limit_exceeded'],
      ['start_phone_limit', 429, 'rate_limit_exceeded'],
      ['start_phone_caller_limit', 429, 'rate_limit_exceeded'],
      ['resend_cooldown', 429, 'rate_limit_exceeded'],
      ['check_limit', 429, 'rate_limit_exceeded'],
      ['spend_cap', 503, 'service_unavailable'],
      ['before_start_failed', 503, 'service_unavailable'],
      ['assess_start_failed', 503, 'service_unavailable'],
      ['start_in_progress', 503, 'service_unavailable'],
      ['wrong_codes_phone', 429, 'too_many_wrong_codes'],
      ['wrong_codes_owner', 429, 'too_many_wrong_codes'],
      ['range_held', 429, 'rate_limit_exceeded'],
      ['owner_held', 429, 'rate_limit_exceeded'],
      ['client_held', 429, 'rate_limit_exceeded'],
      ['spend_cap_reserve', 503, 'service_unavailable'],
      ['method_held', 409, 'method_held'],
      ['upstream_rate_limit', 429, 'rate_limit_exceeded'],
    ]);
  });

  it('keeps the problem documents byte for byte, extra fields after the reason, and Retry-After', () => {
    const cooldown = new ProtectionRefusal('resend_cooldown', 42, {
      resend_available_at: '2026-01-01T00:00:00.000Z',
    });
    expect(JSON.stringify(cooldown.toProblem())).toBe(
      '{"type":"urn:nestjs-phone-verification:error:rate_limit_exceeded","title":"Too many requests",' +
        '"status":429,"detail":"Too many requests, try again later","error_code":"rate_limit_exceeded",' +
        '"reason":"resend_cooldown","resend_available_at":"2026-01-01T00:00:00.000Z"}',
    );
    expect(cooldown.retryAfterSeconds).toBe(42);
    expect(JSON.stringify(new ProtectionRefusal('wrong_codes_phone', 300).toProblem())).toBe(
      '{"type":"urn:nestjs-phone-verification:error:too_many_wrong_codes","title":"Too many wrong codes",' +
        '"status":429,"detail":"Too many wrong codes were entered, try again later",' +
        '"error_code":"too_many_wrong_codes","reason":"wrong_codes_phone"}',
    );
    expect(JSON.stringify(new ProtectionRefusal('spend_cap', 5).toProblem())).toBe(
      '{"type":"urn:nestjs-phone-verification:error:service_unavailable","title":"Service unavailable",' +
        '"status":503,"detail":"Phone verification is temporarily unavailable, try again later",' +
        '"error_code":"service_unavailable","reason":"spend_cap"}',
    );
  });
});

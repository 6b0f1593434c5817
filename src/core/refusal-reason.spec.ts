import { describe, expect, it } from '@jest/globals';
import { refusalReason } from './refusal-reason.js';
import { VerificationClientError, type ClientErrorCode } from './verification.errors.js';

const refusal = (code: ClientErrorCode, reason?: string) =>
  refusalReason(new VerificationClientError(code, undefined, reason === undefined ? {} : { reason }));

describe('refusalReason: start-route errors as metric labels', () => {
  it.each([
    ['rate_limit_exceeded', 'start_ip_limit', 'rate_limit'],
    ['rate_limit_exceeded', 'start_phone_limit', 'rate_limit'],
    ['rate_limit_exceeded', 'resend_cooldown', 'cooldown'],
    ['rate_limit_exceeded', undefined, 'upstream_rate_limit'],
    ['service_unavailable', 'spend_cap', 'spend_cap'],
    ['service_unavailable', 'before_start_failed', 'hook'],
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

  it('ignores errors that are not client errors', () => {
    expect(refusalReason(new Error('boom'))).toBeUndefined();
    expect(refusalReason('spend_cap')).toBeUndefined();
  });
});

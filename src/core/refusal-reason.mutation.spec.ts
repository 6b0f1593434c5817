import { describe, expect, it } from '@jest/globals';
import {
  PROTECTION_REFUSALS,
  ProtectionRefusal,
  refusalReason,
  type ProtectionRefusalReason,
} from './refusal-reason.js';

/** Every protection refusal: the code and status it is answered with, and its metric label. */
const TABLE: Record<ProtectionRefusalReason, [string, number, string]> = {
  start_ip_limit: ['rate_limit_exceeded', 429, 'rate_limit'],
  start_phone_limit: ['rate_limit_exceeded', 429, 'rate_limit'],
  start_phone_caller_limit: ['rate_limit_exceeded', 429, 'rate_limit'],
  resend_cooldown: ['rate_limit_exceeded', 429, 'cooldown'],
  check_limit: ['rate_limit_exceeded', 429, 'rate_limit'],
  spend_cap: ['service_unavailable', 503, 'spend_cap'],
  before_start_failed: ['service_unavailable', 503, 'hook'],
  assess_start_failed: ['service_unavailable', 503, 'hook'],
  start_in_progress: ['service_unavailable', 503, 'in_progress'],
  wrong_codes_phone: ['too_many_wrong_codes', 429, 'rate_limit'],
  wrong_codes_owner: ['too_many_wrong_codes', 429, 'rate_limit'],
  range_held: ['rate_limit_exceeded', 429, 'pumping'],
  owner_held: ['rate_limit_exceeded', 429, 'pumping'],
  client_held: ['rate_limit_exceeded', 429, 'pumping'],
  spend_cap_reserve: ['service_unavailable', 503, 'pumping'],
  method_held: ['method_held', 409, 'pumping'],
  upstream_rate_limit: ['rate_limit_exceeded', 429, 'upstream_rate_limit'],
};

describe('protection refusals, every one', () => {
  it('the table names each reason once', () => {
    expect(Object.keys(PROTECTION_REFUSALS).sort()).toStrictEqual(Object.keys(TABLE).sort());
  });

  it.each(Object.entries(TABLE))('%s → %j', (reason, [errorCode, status, label]) => {
    const refusal = new ProtectionRefusal(reason as ProtectionRefusalReason, 7);
    expect([refusal.errorCode, refusal.getStatus(), refusalReason(refusal)]).toStrictEqual([
      errorCode,
      status,
      label,
    ]);
    expect(refusal.extra).toStrictEqual({ reason });
    expect(refusal.retryAfterSeconds).toBe(7);
  });

  it('an error that is not the package’s is not a refusal, whatever code it carries', () => {
    const foreign = Object.assign(new Error('429 from somewhere'), { errorCode: 'rate_limit_exceeded' });
    expect(refusalReason(foreign)).toBeUndefined();
    expect(refusalReason({ errorCode: 'phone_not_allowed' })).toBeUndefined();
  });
});

import { VerificationClientError } from '../verification.errors.js';

/**
 * Machine-readable `reason` of every refusal made by protection (in the problem document, so
 * frontends and metrics can tell them apart). A `start_refused` carries the host's own reason
 * from `beforeStart` instead.
 */
export const ProtectionRefusalReason = {
  startIpLimit: 'start_ip_limit',
  startPhoneLimit: 'start_phone_limit',
  resendCooldown: 'resend_cooldown',
  checkLimit: 'check_limit',
  spendCap: 'spend_cap',
  beforeStartFailed: 'before_start_failed',
  startInProgress: 'start_in_progress',
} as const;
export type ProtectionRefusalReason = (typeof ProtectionRefusalReason)[keyof typeof ProtectionRefusalReason];

/** Whole seconds for `Retry-After`, never below 1 (0 would invite an immediate retry storm). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** 429 `rate_limit_exceeded` with `Retry-After` and the limit's reason. */
export function rateLimited(
  reason: ProtectionRefusalReason,
  msBeforeNext: number,
  extra: Record<string, unknown> = {},
): VerificationClientError {
  return new VerificationClientError(
    'rate_limit_exceeded',
    'Too many requests, try again later',
    { reason, ...extra },
    retryAfterSeconds(msBeforeNext),
  );
}

/** 503 `service_unavailable` made by protection itself (spend cap, failing hook). */
export function protectionUnavailable(
  reason: ProtectionRefusalReason,
  retryAfterMs: number,
): VerificationClientError {
  return new VerificationClientError(
    'service_unavailable',
    'Phone verification is temporarily unavailable, try again later',
    { reason },
    retryAfterSeconds(retryAfterMs),
  );
}

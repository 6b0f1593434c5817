import { VerificationClientError } from '../core/verification.errors.js';

/**
 * Machine-readable `reason` of every refusal made by protection (in the problem document, so
 * frontends and metrics can tell them apart). A `start_refused` carries the host's own reason
 * from `beforeStart` instead.
 */
export const ProtectionRefusalReason = {
  startIpLimit: 'start_ip_limit',
  startPhoneLimit: 'start_phone_limit',
  startPhoneCallerLimit: 'start_phone_caller_limit',
  resendCooldown: 'resend_cooldown',
  checkLimit: 'check_limit',
  spendCap: 'spend_cap',
  beforeStartFailed: 'before_start_failed',
  startInProgress: 'start_in_progress',
  wrongCodesPhone: 'wrong_codes_phone',
  wrongCodesOwner: 'wrong_codes_owner',
  rangeHeld: 'range_held',
  ownerHeld: 'owner_held',
  clientHeld: 'client_held',
  spendCapReserve: 'spend_cap_reserve',
} as const;
export type ProtectionRefusalReason = (typeof ProtectionRefusalReason)[keyof typeof ProtectionRefusalReason];

/** Whole seconds for `Retry-After`, never below 1 (0 would invite an immediate retry storm). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Granularity of a coarse wait: whole 5-minute steps (or the window, when shorter). */
const COARSE_STEP_MS = 300_000;

/**
 * A wait rounded up to whole steps, for refusals caused by other callers (the per-number limits):
 * an exact `Retry-After` would tell a stranger, to the second, when someone else's first start or
 * wrong code of the window happened. Never shorter than the real wait, so a retry after it passes.
 */
export function coarseWaitMs(ms: number, windowMs: number): number {
  const step = Math.min(COARSE_STEP_MS, windowMs);
  return Math.max(1, Math.ceil(ms / step)) * step;
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

/** 429 `too_many_wrong_codes`: the number's (or the owner's) wrong codes are used up for the window. */
export function tooManyWrongCodes(
  reason: ProtectionRefusalReason,
  msBeforeNext: number,
): VerificationClientError {
  return new VerificationClientError(
    'too_many_wrong_codes',
    'Too many wrong codes were entered, try again later',
    { reason },
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

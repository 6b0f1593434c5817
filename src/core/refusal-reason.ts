import { VerificationClientError, type ClientErrorCode } from './verification.errors.js';

/**
 * Why the start route refused a caller, as a low-cardinality metric label:
 * protection's limits (`rate_limit`, `cooldown`, `spend_cap`), the pumping defence (`pumping`), the allowlists (methods, countries,
 * number types), the host's `beforeStart` hook (refusing or failing), an identical start still in
 * flight (`in_progress`), or the API's own 429 (`upstream_rate_limit`).
 */
export type RefusalReason =
  | 'rate_limit'
  | 'cooldown'
  | 'spend_cap'
  | 'allowlist'
  | 'hook'
  | 'in_progress'
  | 'upstream_rate_limit'
  | 'pumping';

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
  assessStartFailed: 'assess_start_failed',
  startInProgress: 'start_in_progress',
  wrongCodesPhone: 'wrong_codes_phone',
  wrongCodesOwner: 'wrong_codes_owner',
  rangeHeld: 'range_held',
  ownerHeld: 'owner_held',
  clientHeld: 'client_held',
  spendCapReserve: 'spend_cap_reserve',
  methodHeld: 'method_held',
  upstreamRateLimit: 'upstream_rate_limit',
} as const;
export type ProtectionRefusalReason = (typeof ProtectionRefusalReason)[keyof typeof ProtectionRefusalReason];

/** The error codes protection refuses with. */
export type ProtectionRefusalCode = Extract<
  ClientErrorCode,
  'rate_limit_exceeded' | 'too_many_wrong_codes' | 'service_unavailable' | 'method_held'
>;

/**
 * Each protection refusal once: the error code it is answered with (its HTTP status is that code's,
 * in CLIENT_ERROR_STATUSES) and the metric label it is counted under.
 */
export const PROTECTION_REFUSALS: Readonly<
  Record<ProtectionRefusalReason, { errorCode: ProtectionRefusalCode; label: RefusalReason }>
> = {
  start_ip_limit: { errorCode: 'rate_limit_exceeded', label: 'rate_limit' },
  start_phone_limit: { errorCode: 'rate_limit_exceeded', label: 'rate_limit' },
  start_phone_caller_limit: { errorCode: 'rate_limit_exceeded', label: 'rate_limit' },
  resend_cooldown: { errorCode: 'rate_limit_exceeded', label: 'cooldown' },
  // The check route's: not counted as a start refusal (the label is there for completeness).
  check_limit: { errorCode: 'rate_limit_exceeded', label: 'rate_limit' },
  spend_cap: { errorCode: 'service_unavailable', label: 'spend_cap' },
  before_start_failed: { errorCode: 'service_unavailable', label: 'hook' },
  assess_start_failed: { errorCode: 'service_unavailable', label: 'hook' },
  start_in_progress: { errorCode: 'service_unavailable', label: 'in_progress' },
  wrong_codes_phone: { errorCode: 'too_many_wrong_codes', label: 'rate_limit' },
  wrong_codes_owner: { errorCode: 'too_many_wrong_codes', label: 'rate_limit' },
  range_held: { errorCode: 'rate_limit_exceeded', label: 'pumping' },
  owner_held: { errorCode: 'rate_limit_exceeded', label: 'pumping' },
  client_held: { errorCode: 'rate_limit_exceeded', label: 'pumping' },
  spend_cap_reserve: { errorCode: 'service_unavailable', label: 'pumping' },
  // A graded answer: the start is suspected, and only methods charged on proof are offered.
  method_held: { errorCode: 'method_held', label: 'pumping' },
  // The API answered 429 a moment ago: every instance waits out its Retry-After instead of forwarding.
  upstream_rate_limit: { errorCode: 'rate_limit_exceeded', label: 'upstream_rate_limit' },
};

const DETAILS: Readonly<Record<ProtectionRefusalCode, string>> = {
  rate_limit_exceeded: 'Too many requests, try again later',
  too_many_wrong_codes: 'Too many wrong codes were entered, try again later',
  service_unavailable: 'Phone verification is temporarily unavailable, try again later',
  method_held: 'This method is not available for this number now: use one of offered_methods',
};

/**
 * A refusal made by protection: `reason` is typed, and its error code, HTTP status and metric label
 * follow from it (PROTECTION_REFUSALS). On the wire it is the client error it always was, with
 * `reason` (and `extra`) in the problem document and `Retry-After`.
 */
export class ProtectionRefusal extends VerificationClientError {
  constructor(
    readonly reason: ProtectionRefusalReason,
    retryAfterSeconds: number,
    extra: Record<string, unknown> = {},
  ) {
    const { errorCode } = PROTECTION_REFUSALS[reason];
    super(errorCode, DETAILS[errorCode], { reason, ...extra }, retryAfterSeconds);
  }
}

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

/** Protection's refusal for `reason`, retryable after `retryAfterMs` (`Retry-After`); `extra` adds fields to the problem. */
export function protectionRefusal(
  reason: ProtectionRefusalReason,
  retryAfterMs: number,
  extra: Record<string, unknown> = {},
): ProtectionRefusal {
  return new ProtectionRefusal(reason, retryAfterSeconds(retryAfterMs), extra);
}

/**
 * The refusal label of an error thrown on the start route, or undefined when it is not a refusal
 * (bad input, upstream unavailable, a bug). Protection's refusals carry their label in
 * PROTECTION_REFUSALS; of other errors, the error code alone decides. A `start_refused` carries
 * the host's own reason code, which is never used as a label (unbounded).
 */
export function refusalReason(error: unknown): RefusalReason | undefined {
  if (error instanceof ProtectionRefusal) return PROTECTION_REFUSALS[error.reason].label;
  if (!(error instanceof VerificationClientError)) return undefined;
  switch (error.errorCode) {
    case 'start_refused':
      return 'hook';
    case 'phone_not_allowed':
    case 'method_not_available':
      return 'allowlist';
    case 'rate_limit_exceeded':
      // Protection's own are ProtectionRefusals: this is the API's 429 passed through.
      return 'upstream_rate_limit';
    default:
      return undefined;
  }
}

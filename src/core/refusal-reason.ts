import { VerificationClientError } from './verification.errors.js';

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
 * The refusal reason of an error thrown on the start route, or undefined when it is not a refusal
 * (bad input, upstream unavailable, a bug). Protection puts a machine-readable `reason` in the
 * error's `extra`; the error code decides the family, the reason refines it. A `start_refused`
 * carries the host's own reason code, which is never used as a label (unbounded).
 */
/** The pumping defence's holds and the spend cap's reserve for known callers. */
const PUMPING_REASONS: readonly string[] = ['range_held', 'owner_held', 'client_held', 'spend_cap_reserve'];

export function refusalReason(error: unknown): RefusalReason | undefined {
  if (!(error instanceof VerificationClientError)) return undefined;
  // The host's own reason code (any text) must not be read as one of protection's.
  if (error.errorCode === 'start_refused') return 'hook';
  const reason = typeof error.extra.reason === 'string' ? error.extra.reason.toLowerCase() : undefined;
  if (reason !== undefined && PUMPING_REASONS.includes(reason)) return 'pumping';
  if (reason?.includes('spend')) return 'spend_cap';
  if (reason?.includes('before_start')) return 'hook';
  if (reason?.includes('in_progress')) return 'in_progress';
  switch (error.errorCode) {
    case 'phone_not_allowed':
    case 'method_not_available':
      return 'allowlist';
    case 'rate_limit_exceeded':
      // Protection always says which limit; a bare 429 is the API's answer passed through.
      if (reason === undefined) return 'upstream_rate_limit';
      return /cooldown|resend/.test(reason) ? 'cooldown' : 'rate_limit';
    case 'too_many_wrong_codes':
      return 'rate_limit';
    default:
      return undefined;
  }
}

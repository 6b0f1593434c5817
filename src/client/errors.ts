/** The problem document of a refusal (RFC 9457), as the client routes send it. */
export interface VerificationProblem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  error_code?: string;
  attempts_remaining?: number;
  verification_status?: string;
  available_methods?: string[];
  /** `fallback_not_available`: when the switch will be accepted. */
  fallback_available_at?: string;
  /** `method_held`: the methods (charged on proof) this number is offered for now. */
  offered_methods?: string[];
  reason?: string;
  errors?: { field: string; message: string }[];
  [field: string]: unknown;
}

/**
 * The server's `error_code`s (see the README's error codes table; `switch_in_progress`: another
 * switch of the same verification is under way, 409 with `Retry-After`; `fallback_not_available`: too
 * early to leave this method, 409 with `fallback_available_at`; `journey_limit_reached`: no more
 * methods for this verification, 409; `method_held`: only methods charged on proof are offered
 * for this number now, 409 with `offered_methods`, which `start` and `switchMethod` follow by
 * themselves), and the client's own:
 * `network_error` (no answer), `unexpected_response` (an answer that is not the contract's),
 * `no_verification` (a call that needs a verification in progress), `resend_unavailable`,
 * `fetch_unavailable` (thrown when the client is made: no `options.fetch` and none in the page).
 */
export type VerificationErrorCode =
  | 'validation_error'
  | 'invalid_code'
  | 'method_not_available'
  | 'phone_not_allowed'
  | 'start_refused'
  | 'cross_site_request'
  | 'not_found'
  | 'not_pending'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limit_exceeded'
  | 'too_many_wrong_codes'
  | 'switch_in_progress'
  | 'fallback_not_available'
  | 'journey_limit_reached'
  | 'method_held'
  | 'purpose_not_allowed'
  | 'step_up_required'
  | 'service_unavailable'
  | 'network_error'
  | 'unexpected_response'
  | 'no_verification'
  | 'resend_unavailable'
  | 'fetch_unavailable'
  | (string & {});

/** A refusal of a client route, or a failure to reach it. Branch on `code`, never on `message`. */
export class VerificationClientError extends Error {
  override readonly name = 'VerificationClientError';
  /** Instant (server clock, ms) until which a retry is pointless, from `Retry-After`. */
  readonly retryUntil: number | null;

  constructor(
    readonly code: VerificationErrorCode,
    /** The HTTP status; 0 when no answer arrived. */
    readonly status: number,
    readonly problem: VerificationProblem = {},
    /** `Retry-After` in ms, or null. */
    readonly retryAfterMs: number | null = null,
    serverNow = 0,
  ) {
    super(problem.detail ?? code);
    this.retryUntil = retryAfterMs === null ? null : serverNow + retryAfterMs;
  }

  /** `invalid_code`: checks left for this verification. */
  get attemptsRemaining(): number | undefined {
    return this.problem.attempts_remaining;
  }

  /** `not_pending`: the verification's own status (`expired`, `failed`, `verified`). */
  get verificationStatus(): string | undefined {
    return this.problem.verification_status;
  }
}

/** `Retry-After` as ms: delay-seconds or an HTTP date (relative to the server's `Date`). */
export function parseRetryAfter(value: string | null, serverNow: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - serverNow);
}

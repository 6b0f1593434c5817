import { HttpException } from '@nestjs/common';
import { joinErrorFamily } from './phone-verification.error.js';

/** Error codes a frontend may receive from the client routes (`error_code` of the problem document). */
export const ClientErrorCode = {
  validationError: 'validation_error',
  invalidCode: 'invalid_code',
  methodNotAvailable: 'method_not_available',
  phoneNotAllowed: 'phone_not_allowed',
  notFound: 'not_found',
  notPending: 'not_pending',
  rateLimitExceeded: 'rate_limit_exceeded',
  tooManyWrongCodes: 'too_many_wrong_codes',
  startRefused: 'start_refused',
  serviceUnavailable: 'service_unavailable',
  invalidSignature: 'invalid_signature',
  payloadTooLarge: 'payload_too_large',
  unsupportedMediaType: 'unsupported_media_type',
  crossSiteRequest: 'cross_site_request',
  journeyLimitReached: 'journey_limit_reached',
  fallbackNotAvailable: 'fallback_not_available',
  switchInProgress: 'switch_in_progress',
  methodHeld: 'method_held',
  /** VerifiedPhoneGuard on a host's route: no verification (or claim) this caller may use. */
  phoneVerificationRequired: 'phone_verification_required',
  /** VerifiedPhoneGuard on a host's route: the verification is the caller's but not verified. */
  phoneNotVerified: 'phone_not_verified',
  /** A start naming a purpose this registration neither builds in nor declares (`purposes`). */
  purposeNotAllowed: 'purpose_not_allowed',
  /** The host's `assessStart` asks for its challenge (a captcha, a proof of presence) before this start. */
  stepUpRequired: 'step_up_required',
} as const;
export type ClientErrorCode = (typeof ClientErrorCode)[keyof typeof ClientErrorCode];

const TITLES: Record<ClientErrorCode, string> = {
  validation_error: 'Invalid request',
  invalid_code: 'Invalid code',
  method_not_available: 'Method not available',
  phone_not_allowed: 'Phone number not allowed',
  not_found: 'Verification not found',
  not_pending: 'Verification is not pending',
  rate_limit_exceeded: 'Too many requests',
  too_many_wrong_codes: 'Too many wrong codes',
  start_refused: 'Start refused',
  service_unavailable: 'Service unavailable',
  invalid_signature: 'Invalid webhook signature',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  cross_site_request: 'Cross-site request refused',
  journey_limit_reached: 'Journey limit reached',
  fallback_not_available: 'Fallback not available yet',
  switch_in_progress: 'Switch in progress',
  method_held: 'Method held',
  phone_verification_required: 'Phone verification required',
  phone_not_verified: 'Phone not verified',
  purpose_not_allowed: 'Purpose not allowed',
  step_up_required: 'Step-up required',
};

/** The HTTP status of each error code (the problem document's integer `status`). */
export const CLIENT_ERROR_STATUSES: Readonly<Record<ClientErrorCode, number>> = {
  validation_error: 400,
  invalid_code: 400,
  method_not_available: 400,
  phone_not_allowed: 400,
  not_found: 404,
  not_pending: 409,
  rate_limit_exceeded: 429,
  too_many_wrong_codes: 429,
  start_refused: 403,
  service_unavailable: 503,
  invalid_signature: 401,
  payload_too_large: 413,
  unsupported_media_type: 415,
  cross_site_request: 403,
  journey_limit_reached: 409,
  fallback_not_available: 409,
  switch_in_progress: 409,
  method_held: 409,
  phone_verification_required: 403,
  phone_not_verified: 409,
  purpose_not_allowed: 400,
  step_up_required: 403,
};

const PROBLEM_TYPE_PREFIX = 'urn:nestjs-phone-verification:error:';

/** The problem document of `service_unavailable` without a detail: what any other package error shows. */
function unavailableProblem(): Record<string, unknown> {
  return {
    type: `${PROBLEM_TYPE_PREFIX}service_unavailable`,
    title: TITLES.service_unavailable,
    status: CLIENT_ERROR_STATUSES.service_unavailable,
    detail: 'Phone verification is temporarily unavailable, try again later',
    error_code: 'service_unavailable',
  };
}

/**
 * The base class of the errors a host renders (a line of PhoneVerificationError's family). It is an
 * HttpException, so Nest's own exception filter (or a host's) renders it without knowing the
 * package: its response is an RFC 9457 problem document and its status the HTTP status. A package
 * error with no meaning for a frontend renders as a bare 503 `service_unavailable`; its message and
 * `cause` (for the operator's log) never reach the response.
 */
export class VerificationError extends HttpException {
  constructor(
    message: string,
    options: { cause?: unknown; status?: number; problem?: Record<string, unknown>; errorCode?: string } = {},
  ) {
    super(
      options.problem ?? unavailableProblem(),
      options.status ?? CLIENT_ERROR_STATUSES.service_unavailable,
      {
        cause: options.cause,
        errorCode: options.errorCode ?? 'service_unavailable',
      },
    );
    this.message = message;
    this.name = new.target.name;
  }
}
joinErrorFamily(VerificationError);

/**
 * A refusal the frontend may see: an HttpException whose `getResponse()` is the problem document
 * (`application/problem+json` on the module's routes, rendered by VerificationProblemFilter) and
 * whose `getStatus()` is its HTTP status. `extra` holds the code-specific fields
 * (`attempts_remaining`, `verification_status`, `reason`, `errors`), in snake_case; it never holds
 * `status`, which is always the integer HTTP status. Never put secrets, upstream ids or costs here:
 * everything in it reaches the browser.
 */
export class VerificationClientError extends VerificationError {
  declare readonly errorCode: ClientErrorCode;
  readonly title: string;

  constructor(
    errorCode: ClientErrorCode,
    readonly detail?: string,
    readonly extra: Record<string, unknown> = {},
    /** Seconds for the `Retry-After` header (429, 503). */
    readonly retryAfterSeconds?: number,
    options: { cause?: unknown } = {},
  ) {
    const status = CLIENT_ERROR_STATUSES[errorCode];
    super(detail ?? TITLES[errorCode], {
      status,
      errorCode,
      cause: options.cause,
      problem: problemDocument(errorCode, status, detail, extra),
    });
    this.title = TITLES[errorCode];
  }

  /** The problem document, optionally with an `instance`. */
  toProblem(instance?: string): Record<string, unknown> {
    const problem = this.getResponse() as Record<string, unknown>;
    return instance ? { ...problem, instance } : problem;
  }
}

function problemDocument(
  errorCode: ClientErrorCode,
  status: number,
  detail: string | undefined,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const problem: Record<string, unknown> = {
    type: `${PROBLEM_TYPE_PREFIX}${errorCode}`,
    title: TITLES[errorCode],
    status,
    detail: detail ?? TITLES[errorCode],
    error_code: errorCode,
    ...extra,
  };
  // `status` stays the integer HTTP status whatever `extra` holds (RFC 9457).
  problem.status = status;
  return problem;
}

/**
 * The error to hand a host for anything that went wrong inside the module: a package error as it
 * is, anything else (a store outage, an upstream failure, a bug) as a 503 `service_unavailable`
 * keeping the original as its `cause` (for logs; it never reaches a response).
 */
export function asVerificationError(error: unknown): VerificationError {
  if (error instanceof VerificationError) return error;
  return new VerificationClientError(
    'service_unavailable',
    'Phone verification is temporarily unavailable, try again later',
    {},
    5,
    { cause: error },
  );
}

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
};

const STATUSES: Record<ClientErrorCode, number> = {
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
};

/**
 * A refusal the frontend may see, rendered as `application/problem+json` by the module's filter.
 * `extra` holds the code-specific fields (`attempts_remaining`, `status`, `reason`, `errors`), in snake_case.
 * Never put secrets, upstream ids or costs here: everything in it reaches the browser.
 */
export class VerificationClientError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly errorCode: ClientErrorCode,
    readonly detail?: string,
    readonly extra: Record<string, unknown> = {},
    /** Seconds for the `Retry-After` header (429, 503). */
    readonly retryAfterSeconds?: number,
  ) {
    super(detail ?? TITLES[errorCode]);
    this.name = 'VerificationClientError';
    this.status = STATUSES[errorCode];
    this.title = TITLES[errorCode];
  }

  toProblem(instance?: string): Record<string, unknown> {
    return {
      type: `urn:nestjs-phone-verification:error:${this.errorCode}`,
      title: this.title,
      status: this.status,
      detail: this.detail ?? this.title,
      ...(instance ? { instance } : {}),
      error_code: this.errorCode,
      ...this.extra,
    };
  }
}

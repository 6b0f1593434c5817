import type { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import { isUnknownSession, VerificationApiError } from '../api/verification-api.error.js';
import { VerificationClientError } from '../core/verification.errors.js';

/**
 * The client error for an upstream failure, once the balance watch has seen it (a 402 raises
 * balance_insufficient). The attempt itself was logged by the API client's hook.
 */
export async function upstreamClientError(
  error: unknown,
  balance: VerificationBalanceWatch,
): Promise<VerificationClientError> {
  await balance.noteUpstreamFailure(error);
  return toClientError(error);
}

/**
 * What a frontend sees of an upstream failure that has no more specific meaning for the route:
 * 404 to a call about one session → not_found, 429 → rate_limit_exceeded with Retry-After, everything
 * the frontend cannot act on (401, 402, 403, a 404 to a start or any call not about one session, 5xx,
 * time-outs, garbage) → 503 service_unavailable. The cause is logged by the
 * caller for the operator, never shown.
 */
export function toClientError(error: unknown): VerificationClientError {
  if (error instanceof VerificationClientError) return error;
  if (error instanceof VerificationApiError) {
    if (isUnknownSession(error.operation, error.status)) return new VerificationClientError('not_found');
    if (error.status === 429) {
      const seconds = Math.max(1, Math.ceil((error.retryAfterMs ?? 1000) / 1000));
      return new VerificationClientError(
        'rate_limit_exceeded',
        'Too many requests, try again later',
        {},
        seconds,
      );
    }
  }
  return new VerificationClientError(
    'service_unavailable',
    'Phone verification is temporarily unavailable, try again later',
    {},
    30,
  );
}

/**
 * Whether a failed check was a wrong code as the API said it (`invalid_code`) and the module
 * answers it so: an expired session's 400 (answered `not_pending`) is not a wrong code.
 */
export function apiSaidWrongCode(error: unknown, failure: VerificationClientError): boolean {
  return (
    error instanceof VerificationApiError &&
    error.errorCode === 'invalid_code' &&
    failure.errorCode === 'invalid_code'
  );
}

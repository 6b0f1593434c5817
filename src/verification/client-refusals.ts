import type { KnownVerificationMethod } from '../api/api.types.js';
import { normalizeMethod } from '../api/method-names.js';
import { VerificationClientError } from '../core/verification.errors.js';

/**
 * The method among `offered` (the deployment's candidates, then the effective list), or 400
 * method_not_available listing `available` (`msgr1`, the schema's name, is `msgr1_otp`).
 */
export function offeredMethod(
  method: unknown,
  offered: readonly KnownVerificationMethod[],
  available: readonly KnownVerificationMethod[],
): KnownVerificationMethod {
  if (typeof method !== 'string') throw fieldError('method', 'method must be a string');
  const canonical = normalizeMethod(method);
  const found = offered.find((m) => m === canonical);
  if (!found)
    throw new VerificationClientError(
      'method_not_available',
      `Method "${method.slice(0, 40)}" is not offered here`,
      {
        available_methods: available,
      },
    );
  return found;
}

export function fieldError(field: string, message: string): VerificationClientError {
  return new VerificationClientError('validation_error', message, { errors: [{ field, message }] });
}

export function notPending(status: string): VerificationClientError {
  return new VerificationClientError('not_pending', `The verification is ${status}`, {
    verification_status: status,
  });
}

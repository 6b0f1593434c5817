import { PhoneVerificationError } from '../core/phone-verification.error.js';

/**
 * The shared store (Redis) could not answer in time or at all. The module turns it into a 503
 * `service_unavailable` on client routes and a 5xx on the webhook route.
 *
 * The message names the operation and a redacted reason only: the original client error is
 * not attached as `cause`, because client errors carry the command's arguments (keys and
 * values, which hold phone numbers) and may carry connection details.
 */
export class VerificationStoreUnavailableError extends PhoneVerificationError {
  constructor(
    readonly operation: string,
    reason: string,
  ) {
    super(`Verification store unavailable: ${operation} failed (${reason})`);
  }
}

/** Removes credentials from anything that looks like a connection URL, and any listed secret. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let redacted = text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^@\s/]*@/gi, '$1***@');
  for (const secret of secrets) {
    if (secret.length > 0) redacted = redacted.split(secret).join('***');
  }
  return redacted;
}

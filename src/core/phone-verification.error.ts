import { VerificationError } from './verification.errors.js';

/**
 * The root of every error this package throws on the server side: `err instanceof PhoneVerificationError`
 * tells a host's code that the error is the package's, whatever its kind. Two lines grow from it:
 * - errors a host renders, `VerificationError` and below: an `HttpException` (Nest's filters render it without
 *   knowing the package), so it cannot extend this class; `instanceof` counts it all the same;
 * - errors a host handles or logs, extending this class: the API client's (`VerificationApiError`,
 *   `VerificationApiUnavailableError`), the store's, a listener's, a bad option at boot.
 */
export class PhoneVerificationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }

  /** True for the package's errors of both lines; a subclass answers for its own chain only. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this === PhoneVerificationError && value instanceof VerificationError) return true;
    return Function.prototype[Symbol.hasInstance].call(this, value);
  }
}

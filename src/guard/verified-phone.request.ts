/** What VerifiedPhoneGuard found, kept on the request for `@VerifiedPhone()` and the handler. */
export interface VerifiedPhoneDetails {
  /** E.164, as the API confirmed it (or as a valid claim states it). */
  phoneNumber: string;
  verifiedAt: Date;
  /** The `owner(req)` the verification belongs to. */
  owner: string | undefined;
  /**
   * A reviewer or demo number's verification (`testNumbers`): a guarded route refuses it unless it
   * opted in (`@RequireVerifiedPhone({ allowTestNumbers: true })`); check it on routes of your own.
   */
  test: boolean;
  /** What the verification was for (`purpose` on start); undefined: none named. */
  purpose?: string;
  /** `verification`: read from a `verification_id` and confirmed by the API; `claim`: from a signed claim. */
  source: 'verification' | 'claim';
  /** The `verification_id` it was read from (source `verification`). */
  verificationId?: string;
  /**
   * A signed claim of this verification (a fresh one for source `verification`, the one presented
   * otherwise), for the frontend to send later in `verifiedPhone.claimHeader` for step-up checks.
   */
  claim: string;
}

/** The request property the guard writes; a symbol, so it never meets a host's own field. */
const VERIFIED_PHONE = Symbol.for('nestjs-phone-verification.verifiedPhone');

export function attachVerifiedPhone(request: object, details: VerifiedPhoneDetails): void {
  (request as Record<symbol, unknown>)[VERIFIED_PHONE] = details;
}

/**
 * What VerifiedPhoneGuard found on this request (Express or Fastify request, or a GraphQL context's
 * `req`), or undefined when the guard did not run on it.
 */
export function verifiedPhoneOf(request: unknown): VerifiedPhoneDetails | undefined {
  if (typeof request !== 'object' || request === null) return undefined;
  return (request as Record<symbol, VerifiedPhoneDetails | undefined>)[VERIFIED_PHONE];
}

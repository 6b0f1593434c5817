import { VerificationApiError } from '../api/verification-api.error.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { fieldError, notPending } from './client-refusals.js';
import type { SessionRecord } from '../core/session-record.js';
import { CODE_RULE } from '../core/verification-code.js';
import { isTerminal } from '../core/verification-status.js';

/** What a failed check's translation may ask: the truth about the session, and the module's clock. */
export interface CheckRefusalContext {
  /** The store clock's now. */
  now: number;
  /** The session as the API sees it now (the record as it was when the API cannot be asked). */
  refresh(record: SessionRecord): Promise<SessionRecord>;
  /** Any other failure: logged for the operator, a 503 for the frontend. */
  upstreamFailure(error: unknown): Promise<VerificationClientError>;
}

/**
 * The frontend's refusal for a check the API did not accept. The API answers an expired or spent
 * session with 400 or 409 ("not shown" in the spec), so the session's truth decides between
 * `invalid_code`, `not_pending` (with its status) and `validation_error`.
 */
export async function checkRefusal(
  error: unknown,
  record: SessionRecord,
  context: CheckRefusalContext,
): Promise<VerificationClientError> {
  if (error instanceof VerificationApiError) {
    if (error.status === 400 && error.errorCode === 'invalid_code' && error.attemptsRemaining !== undefined) {
      if (error.attemptsRemaining <= 0) {
        // Out of attempts, or an expired session that the API answers with 400 ("not shown"): ask the truth.
        const fresh = await context.refresh(record);
        if (fresh.status === 'expired' || (!isTerminal(fresh.status) && fresh.expiresAt <= context.now))
          return notPending('expired');
      }
      return new VerificationClientError('invalid_code', 'The code is not correct', {
        attempts_remaining: error.attemptsRemaining,
      });
    }
    if (error.status === 400 && error.errorCode === 'validation_error')
      return fieldError('code', `code must be ${CODE_RULE}`);
    if (error.status === 409 || error.status === 400) {
      // An expired session answers 400 or 409 depending on the API ("not shown"): ask the truth.
      const fresh = await context.refresh(record);
      if (fresh.expiresAt <= context.now && !isTerminal(fresh.status)) return notPending('expired');
      if (error.status === 400 && !isTerminal(fresh.status))
        return new VerificationClientError('invalid_code', 'The code is not correct', {});
      return notPending(fresh.status);
    }
  }
  return context.upstreamFailure(error);
}
